/**
 * Several reference-server processes on one PostgreSQL: 1, then 2 processes on a
 * fresh database each time, every one running its dispatcher. Reported for each:
 *
 * - delivery: events published through the outbox by this process (transactions of 10, 8 at
 *   once), fanned out, delivered to a loopback receiver here and recorded as succeeded, per
 *   second; the CPU each server process and PostgreSQL spent per delivery; and duplicates, the
 *   arrivals beyond one per `X-Delivery-Id` (0 expected: nobody crashes here, so at-least-once
 *   owes no second send);
 * - `POST /events`: autocannon on every process at once (8 connections each), requests per
 *   second in all, the worst p99, and CPU per request per process and PostgreSQL's.
 *
 * The processes, PostgreSQL, the receiver and the load generator share the machine's cores:
 * the CPU per delivery is the figure to carry to other machines (see the capacity model in
 * docs/operations.md). Request logs off (`WAYBILL_LOG_LEVEL=warn`).
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { WorkspaceId } from "@waybill/core/Workspace"
import { EventOutbox, type NewEvent } from "@waybill/events/EventOutbox"
import * as Database from "@waybill/store-pg/Database"
import * as PgEventOutbox from "@waybill/store-pg/PgEventOutbox"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { tourCreated } from "./payloads.js"
import {
  apiKey,
  deliveriesWith,
  freshDatabase,
  load,
  postgresCpuSeconds,
  processCpuSeconds,
  registerWebhook,
  startServer
} from "./server.js"

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000)
const WARM_UP = Math.floor(EVENTS / 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const workspace = Schema.decodeSync(WorkspaceId)("bench")

// The receiver: answers 200 at once and counts arrivals per delivery id.
const arrivals = new Map<string, number>()
const receiver = createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    const id = req.headers["x-delivery-id"]
    if (typeof id === "string") arrivals.set(id, (arrivals.get(id) ?? 0) + 1)
    res.writeHead(200).end()
  })
})
receiver.keepAliveTimeout = 60_000
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

const pool = async (count: number, workers: number, task: (index: number) => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < count) await task(next++)
    })
  )
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const measure = async (processes: number) => {
  const database = await freshDatabase()
  const servers: Array<Awaited<ReturnType<typeof startServer>>> = []
  const runtime = ManagedRuntime.make(
    PgEventOutbox.layer.pipe(
      Layer.provideMerge(Database.layer({ _tag: "Postgres", url: Redacted.make(database.url), maxConnections: 8 }))
    )
  )
  try {
    for (let i = 0; i < processes; i++) {
      servers.push(await startServer(database.url, { WAYBILL_LOG_LEVEL: "warn", WAYBILL_DELIVERY_TIMEOUT_MS: "5000" }))
    }
    await registerWebhook(servers[0]!.base, receiverUrl)
    const succeeded = () => runtime.runPromise(deliveriesWith("succeeded"))
    const run = async (count: number, before: number) => {
      const cpu = { servers: servers.map((s) => processCpuSeconds(s.pid)), postgres: postgresCpuSeconds() }
      const start = performance.now()
      await pool(Math.ceil(count / 10), 8, async (t) => {
        const events: Array<NewEvent> = []
        for (let i = t * 10; i < Math.min(count, (t + 1) * 10); i++) {
          events.push({
            type: "tour-created",
            payload: { tour: { id: `tour_${i}`, status: "planned", substatus: null, properties: {} } }
          })
        }
        await runtime.runPromise(Effect.flatMap(EventOutbox, (outbox) => outbox.publish(workspace, events)))
      })
      const deadline = performance.now() + 180_000
      while ((await succeeded()) < before + count) {
        if (performance.now() > deadline) throw new Error("deliveries were not all recorded in time")
        await sleep(10)
      }
      const seconds = (performance.now() - start) / 1000
      return {
        rate: count / seconds,
        serverUs: servers.map((s, i) => ((processCpuSeconds(s.pid) - cpu.servers[i]!) / count) * 1e6),
        postgresUs: ((postgresCpuSeconds() - cpu.postgres) / count) * 1e6
      }
    }
    await run(WARM_UP, 0)
    const delivery = await run(EVENTS, WARM_UP)
    await sleep(500)
    let duplicates = 0
    for (const seen of arrivals.values()) duplicates += seen - 1
    const deliveriesSeen = arrivals.size

    // POST /events on every process at once.
    const cpu = { servers: servers.map((s) => processCpuSeconds(s.pid)), postgres: postgresCpuSeconds() }
    const loads = await Promise.all(
      servers.map((s) =>
        load("POST /events", {
          url: `${s.base}/events`,
          method: "POST",
          body: tourCreated(1),
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          connections: 8,
          seconds: SECONDS
        })
      )
    )
    const requests = loads.reduce((sum, l) => sum + l.requestsPerSecond, 0) * SECONDS
    const events = {
      rate: requests / SECONDS,
      p99: Math.max(...loads.map((l) => l.p99)),
      non2xx: loads.reduce((sum, l) => sum + l.non2xx, 0),
      serverUs: servers.map((s, i) => ((processCpuSeconds(s.pid) - cpu.servers[i]!) / requests) * 1e6),
      postgresUs: ((postgresCpuSeconds() - cpu.postgres) / requests) * 1e6
    }
    return { processes, delivery, duplicates, deliveriesSeen, events }
  } finally {
    for (const s of servers) s.stop()
    await sleep(1000)
    await runtime.dispose()
    await database.drop()
    arrivals.clear()
  }
}

console.log(
  `Reference-server processes on one PostgreSQL (127.0.0.1), fresh database each; ${EVENTS} events after ${WARM_UP} of warm-up; POST /events ${SECONDS} s, 8 connections per process`
)
let failed = false
for (const processes of [1, 2]) {
  const result = await measure(processes)
  const us = (values: ReadonlyArray<number>) => values.map((v) => `${v.toFixed(0)} µs`).join(" + ")
  console.log(`\n  ${processes} process${processes === 1 ? "" : "es"}`)
  console.log(
    `    delivery     ${result.delivery.rate.toFixed(0).padStart(6)} deliveries/s   CPU per delivery: server ${us(result.delivery.serverUs)}, PostgreSQL ${result.delivery.postgresUs.toFixed(0)} µs   duplicates ${result.duplicates} (of ${result.deliveriesSeen})`
  )
  console.log(
    `    POST /events ${result.events.rate.toFixed(0).padStart(6)} req/s          CPU per request: server ${us(result.events.serverUs)}, PostgreSQL ${result.events.postgresUs.toFixed(0)} µs   worst p99 ${result.events.p99} ms${result.events.non2xx > 0 ? `   non-2xx ${result.events.non2xx}` : ""}`
  )
  if (result.duplicates > 0 || result.events.non2xx > 0) failed = true
}
receiver.close()
receiver.closeAllConnections()
process.exit(failed ? 1 : 0)
