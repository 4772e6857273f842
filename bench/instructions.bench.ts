/**
 * The dispatcher's cost per delivery in instructions, counted by valgrind's callgrind: a count
 * that does not move with the machine's load, where rates here move by ±10 % between runs of
 * one code (docs/benchmarks.md), too much to show a bound of a few per cent (issue 35's 3 %).
 *
 * `dispatcher-workload.ts` (the dispatcher benchmark's in-memory ports, HMAC webhook and loopback
 * receiver) runs under callgrind: once it has started and made 1,000 deliveries, the counters
 * are zeroed (`callgrind_control -z`), the measured deliveries run, and the counters are dumped
 * (`callgrind_control -d`), so neither the start of node, tsx and the modules nor the first
 * compilation counts. V8 runs `--single-threaded` (no concurrent compiler or collector threads,
 * whose timing would change what runs); the receiver and the sender are counted with the
 * dispatcher, as in the rate benchmark's CPU per delivery. `BENCH_RUNS` runs (default 2), each
 * of `BENCH_DELIVERIES` (default 2,000).
 *
 * Reported: instructions per delivery, lower is better, the median of the runs, as a `figure`
 * line that `npm run bench:compare -- --base <rev> instructions` compares between revisions.
 * Needs valgrind (Debian's `valgrind` package); without it the benchmark says so and is
 * skipped. About 4 minutes a run: callgrind runs node some 50 times slower.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { figure, median } from "./harness.js"

const here = dirname(fileURLToPath(import.meta.url))
// A whole number of at least 1 from `name`, else `fallback`; anything else stops the benchmark.
const count = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 1) {
    console.error(`${name} must be a whole number of at least 1, not ${JSON.stringify(process.env[name])}`)
    process.exit(2)
  }
  return value
}
const deliveries = count("BENCH_DELIVERIES", 2_000)
const runs = count("BENCH_RUNS", 2)

if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.log("  skipped: valgrind is not installed (Debian's valgrind package)")
  process.exit(0)
}

// Instructions callgrind counts over the measured deliveries of one run of the workload.
const instructions = async (): Promise<number> => {
  const folder = mkdtempSync(join(tmpdir(), "waybill-callgrind-"))
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      `--callgrind-out-file=${join(folder, "callgrind.out")}`,
      process.execPath,
      "--single-threaded",
      "--conditions=@waybill/source",
      "--import",
      "tsx",
      join(here, "dispatcher-workload.ts"),
      String(deliveries)
    ],
    { cwd: join(here, ".."), stdio: ["pipe", "pipe", "pipe"] }
  )
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
  const control = (flag: string) => execFileSync("callgrind_control", [flag, String(child.pid)], { stdio: "ignore" })
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      if (line === "ready") {
        control("-z")
        child.stdin.write("go\n")
      } else if (line === "done") {
        control("-d")
        child.stdin.write("exit\n")
      }
    }
    const status = await exited
    // The dump of `-d` is the first numbered part; the last, at exit, holds the shutdown.
    const dump = readdirSync(folder).find((file) => file.endsWith(".1"))
    const totals =
      dump === undefined ? null : /^(?:totals|summary): (\d+)/m.exec(readFileSync(join(folder, dump), "utf8"))
    if (status !== 0 || totals === null) {
      throw new Error(`the workload failed (exit ${status}):\n${stderr.slice(-4000)}`)
    }
    return Number(totals[1])
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

const counts: Array<number> = []
for (let run = 0; run < runs; run++) counts.push((await instructions()) / deliveries)
console.log(
  `Dispatcher, in memory, to a loopback receiver: instructions per delivery over ${deliveries} deliveries after 1,000, runs: ${counts.map((count) => Math.round(count).toLocaleString("en")).join(", ")}`
)
figure("dispatcher instructions per delivery", median(counts), "lower is better")
