/**
 * Events published → fanned out, delivered and recorded, end to end, on PostgreSQL:
 * the reference server in its own process runs the dispatcher; a loopback receiver answers at
 * once; the webhook signs with HMAC. The ceiling is a bare HTTP client loop posting the same
 * bodies to the same receiver in the same run. Both sides are warmed up alike before they are
 * measured: the ceiling with `WARM_UP_EVENTS` requests, the pipeline with `WARM_UP_EVENTS`
 * events published and delivered, so neither is timed while its code is first compiled
 * (measured: a cold server spent a sixth of its CPU in the optimising compiler). Then `ROUNDS`
 * rounds take turns with the ceiling, which is measured before, between and after them; each
 * round's ratio is against the mean of the two ceilings beside it, and the result is the median
 * round's, as in the dispatcher benchmark: on this shared machine a single ceiling swings by a
 * factor of two within one run.
 *
 * Events are published the way the service raises them: through the `EventOutbox` port, in
 * transactions of a few events (an embedding application's, here this process's), with
 * `PUBLISHERS` of them at once. The run ends when every delivery is recorded as succeeded in
 * the database, not merely received. A second, smaller run publishes over HTTP (`POST /events`,
 * one event per request) and is reported beside it. With `BENCH_KEEP_DB=1` the database is kept
 * (its URL printed), to inspect what the run wrote: `pg_stat_user_tables` shows, for one, how
 * many deliveries took a second write.
 */
import { Agent, createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import * as SqlClient from "@effect/sql/SqlClient"
import { WorkspaceId } from "@waybill/core/Workspace"
import { EventOutbox, type NewEvent } from "@waybill/events/EventOutbox"
import * as Database from "@waybill/store-pg/Database"
import * as PgEventOutbox from "@waybill/store-pg/PgEventOutbox"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { quantileOf, target } from "./harness.js"
import { apiKey, freshDatabase, postgresCpuSeconds, processCpuSeconds, startServer } from "./server.js"

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000)
const HTTP_EVENTS = Math.max(1, Math.floor(EVENTS / 5))
const WARM_UP_EVENTS = Math.max(1, Math.floor(EVENTS / 5))
const ROUNDS = 3
const EVENTS_PER_TRANSACTION = 10
const PUBLISHERS = 8
const CONCURRENCY = 32
const workspace = Schema.decodeSync(WorkspaceId)("bench")

// The receiver: answers 200 at once and notes when each event arrived.
const arrivals = new Map<string, number>()
let bareReceived = 0
const receiver = createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    const eventId = req.headers["x-event-id"]
    if (typeof eventId === "string") arrivals.set(eventId, performance.now())
    else bareReceived++
    res.writeHead(200).end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
const post = (url: string, body: string, headers: Record<string, string>) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", ...headers } },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk) => (text += chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }))
      }
    )
    req.on("error", reject)
    req.end(body)
  })

const pool = async (count: number, workers: number, task: (index: number) => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < count) await task(next++)
    })
  )
}

const payload = (i: number) => ({
  tour: { id: `tour_${i}`, status: "planned", substatus: null, properties: { prop_region: "opt_north" } }
})
const body = (i: number) => JSON.stringify({ type: "tour-created", payload: payload(i) })

const database = await freshDatabase()
const server = await startServer(database.url, { WAYBILL_DELIVERY_TIMEOUT_MS: "5000" })
// This process's own connection to the database: the publishing application's.
const runtime = ManagedRuntime.make(
  PgEventOutbox.layer.pipe(
    Layer.provideMerge(
      Database.layer({ _tag: "Postgres", url: Redacted.make(database.url), maxConnections: PUBLISHERS })
    )
  )
)
try {
  const auth = { authorization: `Bearer ${apiKey}` }
  const registered = await post(
    `${server.base}/webhooks`,
    JSON.stringify({
      url: receiverUrl,
      events: ["tour-created"],
      auth: { type: "hmac", secret: "benchmark-hmac-secret-0001" }
    }),
    auth
  )
  if (registered.status !== 201) throw new Error(`registration failed: ${registered.text}`)

  // The ceiling: the same bodies posted straight to the receiver, after the warm-up.
  await pool(WARM_UP_EVENTS, CONCURRENCY, (i) => post(receiverUrl, body(i), {}).then(() => undefined))
  bareReceived = 0
  const bareLoop = async () => {
    const bareStart = performance.now()
    await pool(EVENTS, CONCURRENCY, (i) => post(receiverUrl, body(i), {}).then(() => undefined))
    return (EVENTS / (performance.now() - bareStart)) * 1000
  }

  const succeeded = () =>
    runtime.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ count: number }>`SELECT count(*)::int AS count FROM deliveries WHERE status = 'succeeded'`
      )
    )
  // Waits until every event has arrived (cheap: this process's own map), then until `total`
  // deliveries are recorded as succeeded; answers when that was.
  const recorded = async (expected: number, total: number) => {
    const deadline = performance.now() + 120_000
    while (arrivals.size < expected && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    while (performance.now() < deadline) {
      const [row] = await succeeded()
      if ((row?.count ?? 0) >= total) return performance.now()
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    throw new Error(`only ${(await succeeded())[0]?.count} of ${total} deliveries were recorded`)
  }

  // End to end, published through the outbox: `count` events in transactions of
  // `EVENTS_PER_TRANSACTION`, `PUBLISHERS` at once; answers when every one is recorded.
  const outboxRun = async (count: number, alreadyRecorded: number) => {
    arrivals.clear()
    const published = new Map<string, number>()
    const publishOne = (events: ReadonlyArray<NewEvent>) =>
      runtime.runPromise(Effect.flatMap(EventOutbox, (outbox) => outbox.publish(workspace, events)))
    // CPU spent per delivery by each party: steadier than the rates on a shared machine.
    const cpuBefore = { server: processCpuSeconds(server.pid), postgres: postgresCpuSeconds(), own: process.cpuUsage() }
    const start = performance.now()
    await pool(Math.ceil(count / EVENTS_PER_TRANSACTION), PUBLISHERS, async (t) => {
      const events: Array<NewEvent> = []
      for (let i = t * EVENTS_PER_TRANSACTION; i < Math.min(count, (t + 1) * EVENTS_PER_TRANSACTION); i++) {
        events.push({ type: "tour-created", payload: payload(i) })
      }
      const sentAt = performance.now()
      for (const event of await publishOne(events)) published.set(event.id, sentAt)
    })
    const publishedAt = performance.now()
    const end = await recorded(count, alreadyRecorded + count)
    const own = process.cpuUsage(cpuBefore.own)
    return {
      rate: (count / (end - start)) * 1000,
      publishRate: (count / (publishedAt - start)) * 1000,
      latencies: [...published].flatMap(([id, sentAt]) => {
        const at = arrivals.get(id)
        return at === undefined ? [] : [at - sentAt]
      }),
      cpuPerDelivery: {
        server: ((processCpuSeconds(server.pid) - cpuBefore.server) / count) * 1e6,
        postgres: ((postgresCpuSeconds() - cpuBefore.postgres) / count) * 1e6,
        own: (own.user + own.system) / count
      }
    }
  }
  // The pipeline is warmed up as the ceiling is: its code optimised before it is measured.
  await outboxRun(WARM_UP_EVENTS, 0)
  // Rounds taking turns with the ceiling, which is measured before and after each: a round's
  // ratio is against the mean of the two beside it, and the median round's is the result.
  const bare = [await bareLoop()]
  const rounds: Array<Awaited<ReturnType<typeof outboxRun>> & { readonly ratio: number }> = []
  for (let round = 0; round < ROUNDS; round++) {
    const result = await outboxRun(EVENTS, WARM_UP_EVENTS + round * EVENTS)
    bare.push(await bareLoop())
    rounds.push({ ...result, ratio: result.rate / ((bare[round]! + bare[round + 1]!) / 2) })
  }
  const bareRate = bare.reduce((sum, rate) => sum + rate, 0) / bare.length
  const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(ROUNDS / 2)]!

  // Beside it: published over HTTP, one event per request.
  arrivals.clear()
  const httpPublished = new Map<string, number>()
  const httpStart = performance.now()
  await pool(HTTP_EVENTS, CONCURRENCY, async (i) => {
    const sentAt = performance.now()
    const reply = await post(`${server.base}/events`, body(i), auth)
    if (reply.status !== 202) throw new Error(`publish failed: ${reply.text}`)
    httpPublished.set(JSON.parse(reply.text).id, sentAt)
  })
  const httpPublishedAt = performance.now()
  const httpEnd = await recorded(HTTP_EVENTS, WARM_UP_EVENTS + ROUNDS * EVENTS + HTTP_EVENTS)
  const httpLatencies = [...httpPublished].flatMap(([id, sentAt]) => {
    const at = arrivals.get(id)
    return at === undefined ? [] : [at - sentAt]
  })
  const httpRate = (HTTP_EVENTS / (httpEnd - httpStart)) * 1000

  const ms = (value: number) => `${value.toFixed(0)} ms`
  console.log(`\nWebhooks end to end: PostgreSQL, HMAC, loopback receiver, dispatcher in the server process`)
  console.log(
    `  bare HTTP loop (ceiling, ${CONCURRENCY} at once), ${EVENTS} requests, before, between and after the rounds: ${bare
      .map((rate) => rate.toFixed(0))
      .join(", ")} req/s`
  )
  console.log(
    `  ${EVENTS} events via the outbox (${PUBLISHERS} publishers, ${EVENTS_PER_TRANSACTION} per transaction) → delivered → recorded, ${ROUNDS} rounds`
  )
  for (const [index, round] of rounds.entries()) {
    console.log(
      `    round ${index + 1}: ${round.rate.toFixed(0).padStart(6)} deliveries/s   ${round.ratio.toFixed(2)} × bare   publish → receipt p50 ${ms(
        quantileOf(round.latencies, 0.5)
      )}, p99 ${ms(quantileOf(round.latencies, 0.99))}   (publishing alone ${round.publishRate.toFixed(0)} events/s)`
    )
    console.log(
      `      CPU per delivery: server ${round.cpuPerDelivery.server.toFixed(0)} µs, PostgreSQL ${round.cpuPerDelivery.postgres.toFixed(
        0
      )} µs, publishers and receiver (this process) ${round.cpuPerDelivery.own.toFixed(0)} µs`
    )
  }
  console.log(
    `  ${HTTP_EVENTS} events via POST /events (${CONCURRENCY} clients, one event per request) → delivered → recorded`
  )
  console.log(
    `      ${httpRate.toFixed(0).padStart(6)} deliveries/s   ${(httpRate / bareRate).toFixed(2)} × bare   publish → receipt p50 ${ms(
      quantileOf(httpLatencies, 0.5)
    )}, p99 ${ms(quantileOf(httpLatencies, 0.99))}   (publishing alone ${(
      (HTTP_EVENTS / (httpPublishedAt - httpStart)) * 1000
    ).toFixed(0)} events/s)`
  )
  console.log(
    `  bare requests received ${bareReceived}; deliveries recorded ${WARM_UP_EVENTS + ROUNDS * EVENTS + HTTP_EVENTS} (${WARM_UP_EVENTS} of them warming up)`
  )
  const ok = target("end to end (outbox) ÷ bare loop, median round", median.ratio, 0.25)
  if (!ok) process.exitCode = 1
} finally {
  server.stop()
  await runtime.dispose()
  receiver.close()
  agent.destroy()
  await new Promise((resolve) => setTimeout(resolve, 500))
  if (process.env.BENCH_KEEP_DB === undefined) await database.drop()
  else console.log(`  database kept for inspection: ${database.url}`)
}
