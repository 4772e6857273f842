/**
 * A PostgreSQL cluster of a test's own: a fresh data directory under the system's temporary
 * directory, a free loopback port, trust authentication, started and stopped by the test (fault
 * tests stop and restart it; the machine's own PostgreSQL is never touched). Needs the server
 * binaries (Debian's postgresql package); as root, the cluster runs as the `postgres` user.
 */
import { execFile } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { chown, mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"

const binaries = (() => {
  const root = "/usr/lib/postgresql"
  if (!existsSync(root)) return undefined
  const newest = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0]
  return newest === undefined ? undefined : join(root, newest, "bin")
})()

/** Whether this machine can run a cluster of a test's own. */
export const canRunCluster = binaries !== undefined && existsSync(join(binaries, "pg_ctl"))

const asRoot = process.getuid?.() === 0
const command = (tool: string, args: ReadonlyArray<string>): [string, Array<string>] =>
  asRoot ? ["runuser", ["-u", "postgres", "--", join(binaries!, tool), ...args]] : [join(binaries!, tool), [...args]]
// Never blocking the test's event loop: its clients and servers go on meanwhile, and a worker
// that stops answering Vitest for a minute fails the run.
const run = (tool: string, args: ReadonlyArray<string>) => promisify(execFile)(...command(tool, args))
const runAsync = (tool: string, args: ReadonlyArray<string>) => Effect.asVoid(Effect.promise(() => run(tool, args)))

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

export interface Cluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string
  /** Stops the server (fast shutdown: open connections are cut, as in a restart). */
  readonly stop: Effect.Effect<void>
  /** Starts it again on the same data directory and port; done once it accepts connections. */
  readonly start: Effect.Effect<void>
}

/** A cluster for the scope: created, started, and at the end stopped and removed. */
export const cluster = Effect.acquireRelease(
  Effect.promise(async () => {
    const directory = await mkdtemp(join(tmpdir(), "waybill-pg-"))
    if (asRoot) await promisify(execFile)("chown", ["postgres:postgres", directory])
    else await chown(directory, process.getuid!(), process.getgid!())
    const data = join(directory, "data")
    await run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
    const port = await freePort()
    const options = `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`
    const startArgs = ["-D", data, "-o", options, "-l", join(directory, "log"), "-w", "-t", "30", "start"]
    const start = runAsync("pg_ctl", startArgs)
    const stop = runAsync("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"])
    await run("pg_ctl", startArgs)
    return { directory, cluster: { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop, start } }
  }),
  ({ directory }) =>
    Effect.promise(async () => {
      // Rejected when already stopped.
      await run("pg_ctl", ["-D", join(directory, "data"), "-m", "immediate", "-w", "stop"]).catch(() => undefined)
      await rm(directory, { recursive: true, force: true })
    })
).pipe(Effect.map(({ cluster }): Cluster => cluster))
