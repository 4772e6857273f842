/**
 * Once per test run, before any test:
 * - `npm run build`: the tests that start the server or the keys command in a process of their
 *   own run the built `dist/` (a start costs about 3 s of CPU less than under tsx, over a hundred
 *   starts a run); tsc's build is incremental, so an unchanged tree costs about 2 s.
 * - A PGlite data directory with every migration applied, which every suite's embedded database
 *   starts from (`@waybill/store-pg/Testing`): loading it takes about half a second, where a new
 *   PGlite and its migrations take several. The same database also as a data directory, which
 *   tests copy for the servers and commands they start on a path (a server's
 *   `<WAYBILL_DATA_DIR>/pglite`). `WAYBILL_TEST_PGLITE_SNAPSHOT=off` leaves both out, to compare
 *   a run without them.
 */
import { execFile } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect } from "effect"

const root = fileURLToPath(new URL(".", import.meta.url))

// Quiet when it succeeds; its whole output when it fails.
const build = () =>
  new Promise<void>((resolve, reject) =>
    execFile("npm", ["run", "build"], { cwd: root, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      error === null ? resolve() : reject(new Error(`npm run build failed:\n${stdout}${stderr}`))
    )
  )

const snapshot = async (): Promise<() => Promise<void>> => {
  if (process.env[Testing.snapshotVariable] === "off") {
    process.env[Testing.snapshotVariable] = ""
    return async () => {}
  }
  const directory = await mkdtemp(join(tmpdir(), "waybill-snapshot-"))
  const file = join(directory, "migrated.tar")
  const dataDir = join(directory, "pglite")
  await Effect.runPromise(Testing.writeSnapshot(file))
  await Effect.runPromise(Testing.writeDataDir(file, dataDir))
  process.env[Testing.snapshotVariable] = file
  process.env[Testing.dataDirVariable] = dataDir
  return () => rm(directory, { recursive: true, force: true })
}

// Vitest runs a global setup for each project as well as for the root, in one process.
const done = Symbol.for("waybill.test.globalSetup")

export default async function setup(): Promise<() => Promise<void>> {
  const state = globalThis as { [done]?: true }
  if (state[done]) return async () => {}
  state[done] = true
  const [, teardown] = await Promise.all([build(), snapshot()])
  return teardown
}
