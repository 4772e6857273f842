/**
 * Deliveries through the dispatcher (`dispatcher-setup.ts`), in two phases that
 * `instructions.bench.ts` tells apart: first `<warm-up>` deliveries that start and warm up the
 * process, then it prints `ready` and waits for a line on stdin; then the measured
 * `<deliveries>`, then it prints `done`, waits for another line and exits.
 *
 * - `batched`: rounds of 1,000 events published at once (the dispatcher batches them as timing
 *   allows: events per fan-out, completions per write, responses per turn of the event loop).
 * - `one-at-a-time`: each event published and its delivery recorded before the next, with no
 *   clock in the way: no polling (the dispatcher is woken by each event) and no deadline for
 *   recording a delivery with its attempt (always one write, when the attempt ends). The same
 *   work for every delivery, whatever the timing.
 *
 * Usage: `node --conditions=@waybill/source --import tsx bench/dispatcher-workload.ts <warm-up>
 * <deliveries> batched|one-at-a-time`
 */
import { createInterface } from "node:readline"
import { startDispatcher } from "./dispatcher-setup.js"

const [warmUp, deliveries] = [Number(process.argv[2]), Number(process.argv[3])]
const mode = process.argv[4]
if (
  ![warmUp, deliveries].every((n) => Number.isInteger(n) && n >= 1) ||
  (mode !== "batched" && mode !== "one-at-a-time")
) {
  console.error("Usage: dispatcher-workload.ts <warm-up> <deliveries> batched|one-at-a-time")
  process.exit(2)
}
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
const hour = 3_600_000
const { runtime, deliver, stop } = await startDispatcher(
  mode === "batched" ? { pollIntervalMs: 50 } : { pollIntervalMs: hour, recordDelayMs: hour }
)
const run = async (count: number) => {
  const round = mode === "batched" ? 1_000 : 1
  for (let done = 0; done < count; done += round) await runtime.runPromise(deliver(Math.min(round, count - done)))
}
await run(warmUp)
console.log("ready")
await lines.next()
await run(deliveries)
console.log("done")
await lines.next()
await stop()
// The sender's kept-alive connections would hold the process for their idle timeout.
process.exit(0)
