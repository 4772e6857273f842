/**
 * Replay against fresh delivery, on PostgreSQL: the reference server in its own
 * process runs the dispatcher; a loopback receiver in this process answers at once. One webhook
 * gets `COUNT` deliveries that fail twice each (the receiver answers 500 to it while it is
 * "down"), then a replay of them all (`POST /webhooks/{id}/replay`) is timed from the request
 * until every delivery is recorded as succeeded. Beside it, in the same run, `COUNT` fresh
 * events of another webhook are published through the `EventOutbox` port (as the webhooks
 * benchmark does) and timed until every delivery is recorded, once before and once after the
 * replay; the ratio is the replay's rate against the mean of the two. A warm-up of fresh
 * deliveries comes first. Both send HMAC-signed requests through the same sender; a replay goes
 * through the claim path (a claim and a result write per delivery), fresh deliveries mostly
 * through fan-out's hand-off (one write).
 *
 * Target: replay ≥ 0.8 × fresh. The machine is shared: compare only ratios from one run. With
 * `BENCH_KEEP_DB=1` the database is kept (its URL printed) for inspection.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as SqlClient from "@effect/sql/SqlClient"
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
import { target } from "./harness.js"
import {
  apiKey,
  deliveriesWith,
  freshDatabase,
  postgresCpuSeconds,
  processCpuSeconds,
  registerWebhook,
  startServer
} from "./server.js"

const COUNT = Number(process.env.BENCH_REPLAY_DELIVERIES ?? 20_000)
const WARM_UP = Math.max(1, Math.floor(COUNT / 10))
const EVENTS_PER_TRANSACTION = 10
const PUBLISHERS = 8
const workspace = Schema.decodeSync(WorkspaceId)("bench")

// The receiver: `/replay` answers 500 while it is down, everything else 200; counts what it got.
let down = true
const received = { replay: 0, replayAnswered: 0, fresh: 0, attemptsOverTwo: 0 }
const receiver = createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    if (req.url === "/replay") {
      received.replay++
      if (Number(req.headers["x-delivery-attempt"]) > 2) received.attemptsOverTwo++
      if (down) {
        res.writeHead(500).end()
        return
      }
      received.replayAnswered++
    } else received.fresh++
    res.writeHead(200).end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`

const pool = async (count: number, workers: number, task: (index: number) => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < count) await task(next++)
    })
  )
}

const database = await freshDatabase()
// A short retry delay, so the failing phase that prepares the replay does not take long.
const server = await startServer(database.url, { WAYBILL_DELIVERY_TIMEOUT_MS: "5000", WAYBILL_RETRY_DELAY_MS: "20" })
const runtime = ManagedRuntime.make(
  PgEventOutbox.layer.pipe(
    Layer.provideMerge(
      Database.layer({ _tag: "Postgres", url: Redacted.make(database.url), maxConnections: PUBLISHERS })
    )
  )
)
const api = async (path: string, body: unknown) => {
  const response = await fetch(`${server.base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${path}: ${response.status} ${text}`)
  return JSON.parse(text)
}
const register = (path: string, event: EventType) => registerWebhook(server.base, `${receiverBase}${path}`, [event])

const countWith = (webhookId: string, status: string) => runtime.runPromise(deliveriesWith(status, webhookId))

const until = async (check: () => boolean | Promise<boolean>, what: string, everyMs = 10, timeoutMs = 600_000) => {
  const deadline = performance.now() + timeoutMs
  while (performance.now() < deadline) {
    if (await check()) return performance.now()
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
  throw new Error(`timed out waiting for ${what}`)
}

// Waits (cheaply: this process's own counter) until the receiver has answered `expected`, then
// until the database records `status` for `total` of the webhook's deliveries: counting rows is
// not free, and polling it all along would load PostgreSQL as much as the work measured.
const recorded = async (answered: () => number, expected: number, webhookId: string, status: string, total: number) => {
  await until(() => answered() >= expected, `${expected} answers`, 2)
  return until(async () => (await countWith(webhookId, status)) >= total, `${total} ${status} deliveries`, 20)
}

const publish = (count: number, type: EventType) =>
  pool(Math.ceil(count / EVENTS_PER_TRANSACTION), PUBLISHERS, async (t) => {
    const events: Array<NewEvent> = []
    for (let i = t * EVENTS_PER_TRANSACTION; i < Math.min(count, (t + 1) * EVENTS_PER_TRANSACTION); i++) {
      events.push({
        type,
        payload: { tour: { id: `tour_${i}`, status: "planned", substatus: null, properties: {} } }
      })
    }
    await runtime.runPromise(Effect.flatMap(EventOutbox, (outbox) => outbox.publish(workspace, events)))
  })

const cpu = () => ({ server: processCpuSeconds(server.pid), postgres: postgresCpuSeconds() })
const perDelivery = (before: ReturnType<typeof cpu>, count: number) => {
  const after = cpu()
  return `server ${(((after.server - before.server) / count) * 1e6).toFixed(0)} µs, PostgreSQL ${(
    ((after.postgres - before.postgres) / count) * 1e6
  ).toFixed(0)} µs per delivery`
}

try {
  // The replay's material: COUNT deliveries that failed twice each while the receiver was down.
  const replayHook = await register("/replay", "tour-created")
  const since = Math.floor(Date.now() / 1000) - 1
  const preparing = performance.now()
  await publish(COUNT, "tour-created")
  await recorded(() => received.replay, 2 * COUNT, replayHook, "failed", COUNT)
  console.log(`\nReplay vs fresh delivery: PostgreSQL, HMAC, loopback receiver, dispatcher in the server process`)
  console.log(
    `  prepared ${COUNT} failed deliveries (two attempts each) in ${((performance.now() - preparing) / 1000).toFixed(1)} s`
  )
  down = false

  const freshHook = await register("/fresh", "tour-edited")
  let freshDone = 0
  const freshRound = async (count: number) => {
    const before = cpu()
    const start = performance.now()
    await publish(count, "tour-edited")
    freshDone += count
    const end = await recorded(() => received.fresh, freshDone, freshHook, "succeeded", freshDone)
    return { rate: (count / (end - start)) * 1000, cpu: perDelivery(before, count) }
  }
  await freshRound(WARM_UP)
  // Statistics, as autovacuum keeps them in a database in use: the tables grew from nothing within
  // seconds, and plans (prepared statements' generic plans included) made for an empty table
  // would scan the whole table for every claim and result. ANALYZE replaces them.
  await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ANALYZE deliveries, events, webhooks`))
  const fresh1 = await freshRound(COUNT)

  const before = cpu()
  const start = performance.now()
  const replayed = await api(`/webhooks/${replayHook}/replay`, { since })
  const marked = performance.now()
  if (replayed.deliveries !== COUNT) throw new Error(`replayed ${replayed.deliveries} of ${COUNT}`)
  const end = await recorded(() => received.replayAnswered, COUNT, replayHook, "succeeded", COUNT)
  const replay = { rate: (COUNT / (end - start)) * 1000, cpu: perDelivery(before, COUNT) }

  const fresh2 = await freshRound(COUNT)
  const freshMean = (fresh1.rate + fresh2.rate) / 2
  const ratio = replay.rate / freshMean

  console.log(`  fresh, ${COUNT} events via the outbox → delivered → recorded (before the replay)`)
  console.log(`      ${fresh1.rate.toFixed(0).padStart(6)} deliveries/s   ${fresh1.cpu}`)
  console.log(`  replay of ${COUNT} failed deliveries: POST /webhooks/{id}/replay → delivered → recorded`)
  console.log(
    `      ${replay.rate.toFixed(0).padStart(6)} deliveries/s   ${ratio.toFixed(2)} × fresh   ${replay.cpu}   (marking: ${(
      marked - start
    ).toFixed(0)} ms, ${((COUNT / (marked - start)) * 1000).toFixed(0)} deliveries/s, ${Math.ceil(COUNT / 1000)} steps)`
  )
  console.log(`  fresh again (after the replay)`)
  console.log(`      ${fresh2.rate.toFixed(0).padStart(6)} deliveries/s   ${fresh2.cpu}`)
  console.log(
    `  receiver: ${received.replay} requests to the replayed webhook (${received.attemptsOverTwo} of them attempt 3), ${received.replayAnswered} answered 200; ${received.fresh} fresh`
  )
  if (received.attemptsOverTwo !== COUNT) {
    console.log(`  ${received.attemptsOverTwo - COUNT} replayed deliveries were sent more than once`)
    process.exitCode = 1
  }
  if (!target("replay ÷ fresh delivery", ratio, 0.8)) process.exitCode = 1
} finally {
  server.stop()
  await runtime.dispose()
  receiver.close()
  await new Promise((resolve) => setTimeout(resolve, 500))
  if (process.env.BENCH_KEEP_DB === undefined) await database.drop()
  else console.log(`  database kept for inspection: ${database.url}`)
}
