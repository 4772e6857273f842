/**
 * The embedded database's private socket directories: each names its process, and a start
 * removes those of processes of this host that ended without removing theirs (SIGKILL), and
 * nothing else.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Embedded from "../src/internal/embedded.js"
import * as Testing from "../src/Testing.js"

const folder = mkdtempSync(join(tmpdir(), "waybill-sockets-test-"))
afterAll(() => rm(folder, { recursive: true, force: true }))

/** The pid of a process that has ended (and been reaped). */
const endedPid = () =>
  new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
    child.on("exit", () => resolve(child.pid!))
  })

const socketDir = (name: string, owner?: string) => {
  const directory = join(folder, `${Embedded.SOCKET_DIR_PREFIX}${name}`)
  mkdirSync(directory)
  writeFileSync(join(directory, ".s.PGSQL.5432"), "")
  if (owner !== undefined) writeFileSync(join(directory, Embedded.OWNER_FILE), `${owner}\n`)
  return directory
}

describe("the embedded database's socket directories", () => {
  it("a start removes those of this host's ended processes, and keeps the rest", async () => {
    const dead = await endedPid()
    const stale = socketDir("stale", `${hostname()} ${dead}`)
    const live = socketDir("live", `${hostname()} ${process.pid}`)
    const otherHost = socketDir("other-host", `another-host-${hostname()} ${dead}`)
    const beingMade = socketDir("being-made")
    const garbled = socketDir("garbled", `${hostname()} not-a-pid`)
    const unrelated = join(folder, "something-else")
    mkdirSync(unrelated)
    writeFileSync(join(unrelated, Embedded.OWNER_FILE), `${hostname()} ${dead}\n`)

    await Embedded.removeStaleSocketDirs(folder)

    assert.isFalse(existsSync(stale))
    for (const kept of [live, otherHost, beingMade, garbled, unrelated]) assert.isTrue(existsSync(kept), kept)
  })

  it.effect("each started database's socket directory names this host and process", () =>
    Effect.gen(function* () {
      const { socketDir: directory } = yield* Embedded.acquire("memory://", {
        searchPath: "public",
        snapshot: process.env[Testing.snapshotVariable] || undefined
      })
      assert.strictEqual(readFileSync(join(directory, Embedded.OWNER_FILE), "utf8"), `${hostname()} ${process.pid}\n`)
    }).pipe(Effect.scoped)
  )
})
