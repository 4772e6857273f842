/**
 * Deliveries through the dispatcher (`dispatcher-setup.ts`) in rounds of 1,000 events published
 * at once, in two phases that `instructions.bench.ts` tells apart: first 1,000 deliveries that
 * start and warm up the process, then it prints `ready` and waits for a line on stdin; then the
 * measured `<deliveries>`, then it prints `done`, waits for another line and exits.
 *
 * Usage: `node --conditions=@waybill/source --import tsx bench/dispatcher-workload.ts <deliveries>`
 */
import { createInterface } from "node:readline"
import { startDispatcher } from "./dispatcher-setup.js"

const deliveries = Number(process.argv[2])
if (!Number.isInteger(deliveries) || deliveries < 1) {
  console.error("Usage: dispatcher-workload.ts <deliveries>")
  process.exit(2)
}
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
const { runtime, deliver, stop } = await startDispatcher()
const rounds = async (count: number) => {
  for (let done = 0; done < count; done += 1_000) await runtime.runPromise(deliver(Math.min(1_000, count - done)))
}
await rounds(1_000)
console.log("ready")
await lines.next()
await rounds(deliveries)
console.log("done")
await lines.next()
await stop()
// The sender's kept-alive connections would hold the process for their idle timeout.
process.exit(0)
