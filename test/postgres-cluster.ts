/**
 * A PostgreSQL cluster of a test's own: a fresh data directory under the system's temporary
 * directory, a free loopback port, trust authentication, started and stopped by the test (fault
 * tests stop and restart it; the machine's own PostgreSQL is never touched). Needs the server
 * binaries (Debian's postgresql package); as root, the cluster runs as the `postgres` user.
 */
import { execFile, execFileSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
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
const run = (tool: string, args: ReadonlyArray<string>) => execFileSync(...command(tool, args), { stdio: "pipe" })
// Without blocking the test's event loop: its clients and servers go on meanwhile.
const runAsync = (tool: string, args: ReadonlyArray<string>) =>
  Effect.async<void>((resume) => {
    execFile(...command(tool, args), (error) => resume(error ? Effect.die(error) : Effect.void))
  })

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
    const directory = mkdtempSync(join(tmpdir(), "waybill-pg-"))
    if (asRoot) execFileSync("chown", ["postgres:postgres", directory])
    else chownSync(directory, process.getuid!(), process.getgid!())
    const data = join(directory, "data")
    run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
    const port = await freePort()
    const options = `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`
    const startArgs = ["-D", data, "-o", options, "-l", join(directory, "log"), "-w", "-t", "30", "start"]
    const start = runAsync("pg_ctl", startArgs)
    const stop = runAsync("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"])
    run("pg_ctl", startArgs)
    return { directory, cluster: { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop, start } }
  }),
  ({ directory }) =>
    Effect.sync(() => {
      try {
        run("pg_ctl", ["-D", join(directory, "data"), "-m", "immediate", "-w", "stop"])
      } catch {
        // Already stopped.
      }
      rmSync(directory, { recursive: true, force: true })
    })
).pipe(Effect.map(({ cluster }): Cluster => cluster))
