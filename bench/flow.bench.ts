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
 *
 * Then rate limits: two server processes on a fresh database, three webhooks limited to 1, 5 and
 * 10 a second, each with a backlog for longer than `RATE_SECONDS`. Per limit, the attempts that
 * arrived in the `RATE_SECONDS` from its first, as a share of the limit (bound: ≥ 0.9), and the
 * most arrivals in any one second (the run fails above the limit).
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
import { type Measurement, report, target } from "./harness.js"
import { deliveriesWith, freshDatabase, registerWebhook, startServer } from "./server.js"

const COUNT = Number(process.env.BENCH_FIFO_DELIVERIES ?? 1_000)
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 30)
const LIMITS = [1, 5, 10]
const ANSWER_MS = 5
const workspace = Schema.decodeSync(WorkspaceId)("bench")

// The receiver: answers after 5 ms; for `/fifo`, notes the order and whether two overlapped;
// for `/rate/<limit>`, when each request arrived.
const received = { fifo: 0, plain: 0, inFlight: 0, overlaps: 0, outOfOrder: 0 }
const arrivals = new Map<string, Array<number>>()
let lastTour = -1
const receiver = createServer((req, res) => {
  const arrivedAt = performance.now()
  if (req.url?.startsWith("/rate/")) {
    const list = arrivals.get(req.url) ?? []
    list.push(arrivedAt)
    arrivals.set(req.url, list)
  }
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

// The most of `times` (sorted) in any window of one second.
const mostInASecond = (times: ReadonlyArray<number>) => {
  let most = 0
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= 1_000) j++
    most = Math.max(most, i - j + 1)
  }
  return most
}

// A second server process on the same database; both claim the rate-limited webhooks' deliveries.
let second: Awaited<ReturnType<typeof startServer>> | undefined
const rateLimits = async () => {
  second = await startServer(database.url, { WAYBILL_LOG_LEVEL: "warn" })
  for (const limit of LIMITS) {
    await registerWebhook([server.base, second.base][limit % 2]!, `${receiverBase}/rate/${limit}`, ["tour-deleted"], {
      rateLimitPerSecond: limit
    })
  }
  // A backlog for every webhook beyond the measured span: each gets every event.
  const events = Math.ceil(Math.max(...LIMITS) * (RATE_SECONDS + 5) * 1.1)
  for (let first = 0; first < events; first += 100) {
    const batch: Array<NewEvent> = []
    for (let i = first; i < Math.min(events, first + 100); i++) {
      batch.push({
        type: "tour-deleted",
        payload: { tour: { id: `tour_rate_${i}`, status: "planned", substatus: null, properties: {} } }
      })
    }
    await runtime.runPromise(Effect.flatMap(EventOutbox, (outbox) => outbox.publish(workspace, batch)))
  }
  const firstOf = (limit: number) => arrivals.get(`/rate/${limit}`)?.[0]
  const deadline = performance.now() + 60_000
  while (LIMITS.some((limit) => firstOf(limit) === undefined) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const starts = LIMITS.map((limit) => firstOf(limit) ?? performance.now())
  await new Promise((resolve) =>
    setTimeout(resolve, Math.max(...starts) + RATE_SECONDS * 1_000 + 100 - performance.now())
  )
  console.log(
    `\nRate limits: ${RATE_SECONDS} s of attempts per webhook with a backlog, two server processes, PostgreSQL`
  )
  for (const [n, limit] of LIMITS.entries()) {
    const times = (arrivals.get(`/rate/${limit}`) ?? []).filter((at) => at < starts[n]! + RATE_SECONDS * 1_000)
    const most = mostInASecond(times)
    const achieved = times.length / RATE_SECONDS
    console.log(
      `  limit ${String(limit).padStart(2)}/s: ${times.length} attempts, ${achieved.toFixed(2)}/s, most in any second ${most}`
    )
    target(`rate limit ${limit}/s: achieved / limit`, achieved / limit, 0.9)
    if (most > limit) {
      console.log(`  limit ${limit}/s: ${most} arrivals in one second, above the limit`)
      process.exitCode = 1
    }
  }
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
  if (RATE_SECONDS > 0) await rateLimits()
} finally {
  server.stop()
  second?.stop()
  await Promise.race([
    Promise.all([server.exited, second?.exited]),
    new Promise((resolve) => setTimeout(resolve, 15_000))
  ])
  await runtime.dispose()
  receiver.close()
  await new Promise((resolve) => setTimeout(resolve, 500))
  await database.drop()
}
