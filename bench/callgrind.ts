/**
 * Benchmark support: running a node process under valgrind's callgrind and counting the
 * instructions of one stretch of its life (counters zeroed at its start, dumped at its end), so
 * that neither node's start nor the first compilation counts.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Whether valgrind is installed (Debian's `valgrind` package). */
export const hasValgrind = (): boolean => {
  try {
    execFileSync("valgrind", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/**
 * V8 without its own clocks and chance: one thread, no memory reducer or idle-time collection
 * (both timed), a fixed hash seed.
 */
export const predictableV8 = ["--single-threaded", "--predictable", "--hash-seed=1"] as const

/**
 * A folder for one callgrind run: the command prefix that runs a program under callgrind with its
 * output there, `control` to zero (`-z`) or dump (`-d`) the counters of the running process, the
 * instructions of the first dump, and `remove`.
 */
export const callgrindRun = () => {
  const folder = mkdtempSync(join(tmpdir(), "waybill-callgrind-"))
  return {
    under: ["valgrind", "-q", "--tool=callgrind", `--callgrind-out-file=${join(folder, "callgrind.out")}`],
    // valgrind names the pipe to a process by the `HOST` variable of that process: a server
    // started with `HOST=127.0.0.1` is reached only by a callgrind_control that has it too.
    control: (flag: "-z" | "-d", pid: number, host?: string) =>
      execFileSync("callgrind_control", [flag, String(pid)], {
        stdio: "ignore",
        env: host === undefined ? process.env : { ...process.env, HOST: host }
      }),
    // The dump of `-d` is the first numbered part; the last, at exit, holds the shutdown.
    dumped: (): number | null => {
      const dump = readdirSync(folder).find((file) => file.endsWith(".1"))
      const totals =
        dump === undefined ? null : /^(?:totals|summary): (\d+)/m.exec(readFileSync(join(folder, dump), "utf8"))
      return totals === null ? null : Number(totals[1])
    },
    remove: () => rmSync(folder, { recursive: true, force: true })
  }
}
