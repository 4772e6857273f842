/**
 * Flow control, on PostgreSQL: the reference server in its own process runs the
 * dispatcher; a loopback receiver in this process answers every request after 5 ms. A FIFO
 * webhook (`"ordering": "fifo"`: one delivery in flight at a time, in event order) gets `COUNT`
 * events, timed from publishing until every delivery is recorded as succeeded; beside it, in the
 * same run, a plain webhook gets as many against the same receiver, for scale. Its bound: one
 * delivery per claim, attempt (5 ms) and result write, so at most ~200/s whatever the machine.
 *
 * Reported, not judged: the FIFO webhook's deliveries/s, and its ratio to the plain webhook's.
 * The receiver checks that FIFO deliveries arrive in event order, one at a time (the run fails
 * otherwise). The machine is shared: compare only figures from one run.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { WorkspaceId } from "@waybill/core/Workspace"
import { EventOutbox, type NewEvent } from "@waybill/events/EventOutbox"
import type { EventType } from "@waybill/events/EventType"
import * as Database from "@waybill/store-pg/Database"
import * as PgEventOutbox from "@waybill/store-pg/PgEventOutbox"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { type Measurement, report } from "./harness.js"
import { deliveriesWith, freshDatabase, registerWebhook, startServer } from "./server.js"

const COUNT = Number(process.env.BENCH_FIFO_DELIVERIES ?? 1_000)
const ANSWER_MS = 5
const workspace = Schema.decodeSync(WorkspaceId)("bench")

// The receiver: answers after 5 ms; for `/fifo`, notes the order and whether two overlapped.
const received = { fifo: 0, plain: 0, inFlight: 0, overlaps: 0, outOfOrder: 0 }
let lastTour = -1
const receiver = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const fifo = req.url === "/fifo"
    if (fifo) {
      if (received.inFlight > 0) received.overlaps++
      received.inFlight++
      const tour = Number(/"tour_(\d+)"/.exec(Buffer.concat(chunks).toString("utf8"))?.[1] ?? -1)
      if (tour <= lastTour) received.outOfOrder++
      lastTour = tour
    }
    setTimeout(() => {
      if (fifo) {
        received.inFlight--
        received.fifo++
      } else received.plain++
      res.writeHead(200).end()
    }, ANSWER_MS)
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`

const database = await freshDatabase()
const server = await startServer(database.url, { WAYBILL_LOG_LEVEL: "warn" })
const runtime = ManagedRuntime.make(
  PgEventOutbox.layer.pipe(
    Layer.provideMerge(Database.layer({ _tag: "Postgres", url: Redacted.make(database.url), maxConnections: 2 }))
  )
)
const register = (path: string, event: EventType, extra: Record<string, unknown>) =>
  registerWebhook(server.base, `${receiverBase}${path}`, [event], extra)

const succeeded = (webhookId: string) => runtime.runPromise(deliveriesWith("succeeded", webhookId))

// Publishes COUNT events of `type` (100 per transaction, in order) and waits until the
// receiver answered them all and the database records them: deliveries per second.
const round = async (type: EventType, webhookId: string, answered: () => number) => {
  const start = performance.now()
  for (let first = 0; first < COUNT; first += 100) {
    const events: Array<NewEvent> = []
    for (let i = first; i < Math.min(COUNT, first + 100); i++) {
      events.push({ type, payload: { tour: { id: `tour_${i}`, status: "planned", substatus: null, properties: {} } } })
    }
    await runtime.runPromise(Effect.flatMap(EventOutbox, (outbox) => outbox.publish(workspace, events)))
  }
  const deadline = start + 600_000
  while (answered() < COUNT || (await succeeded(webhookId)) < COUNT) {
    if (performance.now() > deadline) throw new Error(`timed out: ${answered()} of ${COUNT} answered`)
    await new Promise((resolve) => setTimeout(resolve, answered() < COUNT ? 5 : 20))
  }
  return (COUNT / (performance.now() - start)) * 1000
}

try {
  const plain = await register("/plain", "tour-edited", {})
  const fifo = await register("/fifo", "tour-created", { ordering: "fifo" })
  const plainRate = await round("tour-edited", plain, () => received.plain)
  const fifoRate = await round("tour-created", fifo, () => received.fifo)
  const rows: Array<Measurement> = [
    { name: "plain webhook", opsPerSecond: plainRate },
    { name: "FIFO webhook", opsPerSecond: fifoRate }
  ]
  report(
    `Flow control: ${COUNT} deliveries to a receiver answering in ${ANSWER_MS} ms, PostgreSQL, one server process`,
    rows,
    "plain webhook",
    "deliveries/s"
  )
  console.log(
    `  FIFO: ${received.overlaps} overlapping requests, ${received.outOfOrder} out of event order (both must be 0)`
  )
  if (received.overlaps > 0 || received.outOfOrder > 0) process.exitCode = 1
} finally {
  server.stop()
  await runtime.dispose()
  receiver.close()
  await new Promise((resolve) => setTimeout(resolve, 500))
  await database.drop()
}
