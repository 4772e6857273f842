/**
 * Once per test run: a PGlite data directory with every migration applied, which every suite's
 * embedded database starts from (`@waybill/store-pg/Testing`): loading it takes about half a
 * second, where a new PGlite and its migrations take several. `WAYBILL_TEST_PGLITE_SNAPSHOT=off`
 * leaves it out, to compare a run without it.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect } from "effect"

export default async function setup(): Promise<() => Promise<void>> {
  if (process.env[Testing.snapshotVariable] === "off") {
    process.env[Testing.snapshotVariable] = ""
    return async () => {}
  }
  const directory = await mkdtemp(join(tmpdir(), "waybill-snapshot-"))
  const file = join(directory, "migrated.tar")
  await Effect.runPromise(Testing.writeSnapshot(file))
  process.env[Testing.snapshotVariable] = file
  return () => rm(directory, { recursive: true, force: true })
}
