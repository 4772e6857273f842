/**
 * The dispatcher's cost per delivery in instructions, counted by valgrind's callgrind: a count
 * that does not move with the machine's load, where rates here move by ±10 % between runs of
 * one code (docs/benchmarks.md), too much to show a bound of a few per cent (issue 35's 3 %).
 *
 * `dispatcher-workload.ts` (the dispatcher benchmark's in-memory ports, HMAC webhook and loopback
 * receiver) runs under callgrind twice, with N and with 2N deliveries; the difference of the two
 * totals over N is what one more delivery costs once the process is started and its code
 * compiled (starting node, tsx and the modules is the same in both and cancels). V8 runs
 * `--single-threaded` (no concurrent compiler or collector threads, whose timing would change
 * what runs), and the receiver and the sender are counted with the dispatcher, as in the rate
 * benchmark's CPU per delivery.
 *
 * Reported: instructions per delivery, lower is better, as a `measure` line that
 * `npm run bench:compare -- --base <rev> instructions` compares between revisions. Needs
 * valgrind (Debian's `valgrind` package); without it the benchmark says so and is skipped.
 * About 10 minutes: callgrind runs node some 50 times slower. `BENCH_DELIVERIES` sets N
 * (default 1,500).
 */
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { figure } from "./harness.js"

const here = dirname(fileURLToPath(import.meta.url))
const deliveries = Number(process.env.BENCH_DELIVERIES ?? 1_500)

if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.log("  skipped: valgrind is not installed (Debian's valgrind package)")
  process.exit(0)
}

// Instructions callgrind counts for one run of the workload with `count` deliveries.
const instructions = (count: number): number => {
  const result = spawnSync(
    "valgrind",
    [
      "--tool=callgrind",
      "--callgrind-out-file=/dev/null",
      process.execPath,
      "--single-threaded",
      "--conditions=@waybill/source",
      "--import",
      "tsx",
      join(here, "dispatcher-workload.ts"),
      String(count)
    ],
    { cwd: join(here, ".."), encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }
  )
  const collected = /Collected : (\d+)/.exec(result.stderr)
  if (result.status !== 0 || collected === null) {
    throw new Error(
      `the workload with ${count} deliveries failed (exit ${result.status}):\n${result.stderr.slice(-4000)}`
    )
  }
  return Number(collected[1])
}

const once = instructions(deliveries)
const twice = instructions(2 * deliveries)
console.log(
  `Dispatcher, in memory, to a loopback receiver: ${once.toLocaleString("en")} instructions for ${deliveries} deliveries, ${twice.toLocaleString("en")} for ${2 * deliveries}`
)
figure("dispatcher instructions per delivery", (twice - once) / deliveries, "lower is better")
