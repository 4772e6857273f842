/**
 * A fixed number of deliveries through the dispatcher (`dispatcher-setup.ts`), in rounds of
 * 1,000 events published at once, then exit: `instructions.bench.ts` runs it under callgrind.
 *
 * Usage: `node --conditions=@waybill/source --import tsx bench/dispatcher-workload.ts <deliveries>`
 */
import { startDispatcher } from "./dispatcher-setup.js"

const deliveries = Number(process.argv[2])
if (!Number.isInteger(deliveries) || deliveries < 1) {
  console.error("Usage: dispatcher-workload.ts <deliveries>")
  process.exit(2)
}
const { runtime, deliver, stop } = await startDispatcher()
for (let done = 0; done < deliveries; done += 1_000)
  await runtime.runPromise(deliver(Math.min(1_000, deliveries - done)))
await stop()
// The sender's kept-alive connections would hold the process for their idle timeout.
process.exit(0)
