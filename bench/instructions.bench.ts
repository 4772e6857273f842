/**
 * The dispatcher's cost per delivery in instructions, counted by valgrind's callgrind: a count
 * that does not move with the machine's load, where rates here move by ±10 % between runs of
 * one code (docs/benchmarks.md, "Method notes"), too much to show a bound of a few per cent
 * (3 % for flow control's bound).
 *
 * `dispatcher-workload.ts` (the dispatcher benchmark's in-memory ports, HMAC webhook and loopback
 * receiver) runs under callgrind: once it has started and made its warm-up deliveries, the
 * counters are zeroed (`callgrind_control -z`), the measured deliveries run, and the counters are
 * dumped (`callgrind_control -d`), so neither the start of node, tsx and the modules nor the
 * first compilation counts. V8 runs in its predictable mode (one thread, no timed collections,
 * a fixed hash seed); the receiver and the sender are counted with the dispatcher, as in the rate
 * benchmark's CPU per delivery. Three workloads (`BENCH_WORKLOADS`, default all):
 *
 * - `batched`: `BENCH_DELIVERIES` (default 2,000) after 1,000, in rounds of 1,000 events. What a
 *   delivery costs follows how the work batches, which follows timing: about ±5 % run to run.
 * - `one-at-a-time`: a quarter as many after 250, each recorded before the next is published,
 *   no clock in the dispatcher's way: the same work each time; nine runs in twelve within 1.3 %
 *   of their median, a few higher (docs/benchmarks.md, "Method notes"), so `bench:compare`'s
 *   pairs matter.
 * - `tracing`: the reference server itself (`tracing-workload.ts`), half as many events after
 *   1,000, once as it runs by default and once with metrics and tracing on: what
 *   observability adds to the server's own work, whatever the machine's load (a run's ratio
 *   moves by about ±0.04 as the work batches). Reported as on / off; memory-bound work (the
 *   collector copying spans that wait for export) costs more time than its instructions say.
 *
 * Reported per workload: instructions per delivery (per event, on / off, for `tracing`), lower is
 * better, the median of `BENCH_RUNS` runs (default 2), as a `figure` line that
 * `npm run bench:compare -- --base <rev> instructions` compares between revisions. Needs valgrind
 * (Debian's `valgrind` package); without it the benchmark says so and is skipped. About 4, 3 and
 * 6 minutes a run: callgrind runs node some 50 times slower.
 */
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { callgrindRun, hasValgrind, predictableV8 } from "./callgrind.js"
import { figure, median } from "./harness.js"
import { tracingInstructions } from "./tracing-workload.js"

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
type Mode = "batched" | "one-at-a-time" | "tracing"
// One at a time costs more per delivery and does not spread: a quarter of the deliveries. The
// reference server's events (`tracing`) take half as many: each is a request and a delivery.
const workloads: Record<Mode, { readonly warmUp: number; readonly deliveries: number }> = {
  batched: { warmUp: 1_000, deliveries },
  "one-at-a-time": { warmUp: 250, deliveries: Math.max(1, Math.round(deliveries / 4)) },
  tracing: { warmUp: 1_000, deliveries: Math.max(1, Math.round(deliveries / 2)) }
}
const modes = (process.env.BENCH_WORKLOADS ?? "batched,one-at-a-time,tracing").split(",")
for (const mode of modes) {
  if (!(mode in workloads)) {
    console.error(
      `BENCH_WORKLOADS lists batched, one-at-a-time and tracing, comma-separated, not ${JSON.stringify(mode)}`
    )
    process.exit(2)
  }
}
const runs = count("BENCH_RUNS", 2)

if (!hasValgrind()) {
  console.log("  skipped: valgrind is not installed (Debian's valgrind package)")
  process.exit(0)
}

// Instructions callgrind counts over the measured deliveries of one run of the workload.
const instructions = async (mode: Exclude<Mode, "tracing">): Promise<number> => {
  const run = callgrindRun()
  const child = spawn(
    run.under[0]!,
    [
      ...run.under.slice(1),
      process.execPath,
      ...predictableV8,
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
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      if (line === "ready") {
        run.control("-z", child.pid!)
        child.stdin.write("go\n")
      } else if (line === "done") {
        run.control("-d", child.pid!)
        child.stdin.write("exit\n")
      }
    }
    const status = await exited
    const total = run.dumped()
    if (status !== 0 || total === null) {
      throw new Error(`the workload failed (exit ${status}):\n${stderr.slice(-4000)}`)
    }
    return total
  } finally {
    run.remove()
  }
}

for (const mode of modes as ReadonlyArray<Mode>) {
  const { warmUp, deliveries } = workloads[mode]
  if (mode === "tracing") {
    const ratios: Array<number> = []
    for (let run = 0; run < runs; run++) {
      const off = await tracingInstructions("off", warmUp, deliveries)
      const on = await tracingInstructions("on", warmUp, deliveries)
      ratios.push(on / off)
      console.log(
        `Reference server on PostgreSQL, POST /events delivered to one webhook, ${deliveries} events after ${warmUp}: instructions per event off ${Math.round(off).toLocaleString("en")}, with metrics and tracing ${Math.round(on).toLocaleString("en")} (on / off ${(on / off).toFixed(3)})`
      )
    }
    figure("reference server instructions per event, metrics and tracing on / off", median(ratios), "lower is better")
    continue
  }
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
