/**
 * The dispatcher's cost per delivery in instructions, counted by valgrind's callgrind: a count
 * that does not move with the machine's load, where rates here move by ±10 % between runs of
 * one code (docs/benchmarks.md), too much to show a bound of a few per cent (issue 35's 3 %).
 *
 * `dispatcher-workload.ts` (the dispatcher benchmark's in-memory ports, HMAC webhook and loopback
 * receiver) runs under callgrind: once it has started and made its warm-up deliveries, the
 * counters are zeroed (`callgrind_control -z`), the measured deliveries run, and the counters are
 * dumped (`callgrind_control -d`), so neither the start of node, tsx and the modules nor the
 * first compilation counts. V8 runs in its predictable mode (one thread, no timed collections,
 * a fixed hash seed); the receiver and the sender are counted with the dispatcher, as in the rate
 * benchmark's CPU per delivery. Two workloads (`BENCH_WORKLOADS`, default both):
 *
 * - `batched`: `BENCH_DELIVERIES` (default 2,000) after 1,000, in rounds of 1,000 events. What a
 *   delivery costs follows how the work batches, which follows timing: about ±5 % run to run.
 * - `one-at-a-time`: a quarter as many after 250, each recorded before the next is published,
 *   no clock in the dispatcher's way: the same work each time; nine runs in twelve within 1.3 %
 *   of their median, a few higher (docs/benchmarks.md), so `bench:compare`'s pairs matter.
 *
 * Reported per workload: instructions per delivery, lower is better, the median of `BENCH_RUNS`
 * runs (default 2), as a `figure` line that `npm run bench:compare -- --base <rev> instructions`
 * compares between revisions. Needs valgrind (Debian's `valgrind` package); without it the
 * benchmark says so and is skipped. About 4 and 3 minutes a run: callgrind runs node some 50
 * times slower.
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
type Mode = "batched" | "one-at-a-time"
// One at a time costs more per delivery and does not spread: a quarter of the deliveries.
const workloads: Record<Mode, { readonly warmUp: number; readonly deliveries: number }> = {
  batched: { warmUp: 1_000, deliveries },
  "one-at-a-time": { warmUp: 250, deliveries: Math.max(1, Math.round(deliveries / 4)) }
}
const modes = (process.env.BENCH_WORKLOADS ?? "batched,one-at-a-time").split(",")
for (const mode of modes) {
  if (!(mode in workloads)) {
    console.error(`BENCH_WORKLOADS lists batched and one-at-a-time, comma-separated, not ${JSON.stringify(mode)}`)
    process.exit(2)
  }
}
const runs = count("BENCH_RUNS", 2)

if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.log("  skipped: valgrind is not installed (Debian's valgrind package)")
  process.exit(0)
}

// Instructions callgrind counts over the measured deliveries of one run of the workload.
const instructions = async (mode: Mode): Promise<number> => {
  const folder = mkdtempSync(join(tmpdir(), "waybill-callgrind-"))
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      `--callgrind-out-file=${join(folder, "callgrind.out")}`,
      process.execPath,
      // V8 without its own clocks and chance: one thread, no memory reducer or idle-time
      // collection (both timed), a fixed hash seed.
      "--single-threaded",
      "--predictable",
      "--hash-seed=1",
      "--conditions=@waybill/source",
      "--import",
      "tsx",
      join(here, "dispatcher-workload.ts"),
      String(workloads[mode].warmUp),
      String(workloads[mode].deliveries),
      mode
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

for (const mode of modes as ReadonlyArray<Mode>) {
  const { warmUp, deliveries } = workloads[mode]
  const counts: Array<number> = []
  for (let run = 0; run < runs; run++) counts.push((await instructions(mode)) / deliveries)
  console.log(
    `Dispatcher, in memory, to a loopback receiver, ${mode}: instructions per delivery over ${deliveries} deliveries after ${warmUp}, runs: ${counts.map((count) => Math.round(count).toLocaleString("en")).join(", ")}`
  )
  figure(
    mode === "batched" ? "dispatcher instructions per delivery" : "dispatcher instructions per delivery, one at a time",
    median(counts),
    "lower is better"
  )
}
