/**
 * Delivery statistics at 1,000,000 deliveries of one webhook (contract §8), over HTTP, on the
 * reference server in its own process on PostgreSQL (a fresh database). The deliveries are
 * written by one `INSERT … SELECT generate_series` over the last 167 hours (90 % succeeded, 10 %
 * failed), their hourly rows by `Testing.fillDeliveryHours` as the record writes keep them
 * (decision 0127), then `VACUUM (ANALYZE)` and `CHECKPOINT`, so that no autovacuum or checkpoint of
 * the fill runs on the same cores during the figures.
 *
 * - `GET /webhooks/{id}/stats` for 1, 24 and 168 hours: the median and the slowest of `ROUNDS`
 *   requests one after another, after 5 warm-ups.
 * - `GET /webhooks` (the console's first request) `ROUNDS` times alone, then `ROUNDS` times each
 *   sent right behind ten 168-hour statistics requests sent at once, as ten consoles opening:
 *   first all of that webhook, then one each of ten webhooks (nine more with a tenth as many
 *   deliveries each, enough to fill every hour of the week), which share no read. The ten are sent
 *   from a worker thread, as other consoles are other clients: reading their answers would
 *   otherwise hold up this thread's reading of `GET /webhooks`'s.
 *
 * Targets: every window answers under 100 ms at the median; with ten statistics requests in
 * flight, of one webhook or of ten, `GET /webhooks`'s median stays within its own p99 alone.
 * `BENCH_STATS_DELIVERIES` sets the size (1,000,000), `BENCH_STATS_ROUNDS` the requests per figure
 * (200); with `BENCH_KEEP_DB=1` the database is kept (its URL printed) for inspection.
 */
import { Worker } from "node:worker_threads"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Database from "@waybill/store-pg/Database"
import * as Testing from "@waybill/store-pg/Testing"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { median, quantileOf, target } from "./harness.js"
import { apiKey, freshDatabase, registerWebhook, startServer } from "./server.js"

const DELIVERIES = Number(process.env.BENCH_STATS_DELIVERIES ?? 1_000_000)
// Each of the nine other webhooks' deliveries: hundreds an hour, so each has every hour's row.
const OTHER_DELIVERIES = Math.ceil(DELIVERIES / 10)
const ROUNDS = Number(process.env.BENCH_STATS_ROUNDS ?? 200)
const CONSOLES = 10

const database = await freshDatabase()
const server = await startServer(database.url)
const runtime = ManagedRuntime.make(
  Database.layer({ _tag: "Postgres", url: Redacted.make(database.url), maxConnections: 2 })
)

// The time one GET takes, from the request to the end of its body; fails on anything but 200.
const timedGet = async (path: string) => {
  const start = performance.now()
  const response = await fetch(`${server.base}${path}`, { headers: { authorization: `Bearer ${apiKey}` } })
  const body = await response.text()
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${body}`)
  return { ms: performance.now() - start, body }
}

// Other consoles: a thread of their own that GETs the paths it is sent, all at once. It says
// "sent" once its requests have gone out (a turn of its loop after starting them), then "done"
// when the last body has arrived, or the first failure.
const consoles = new Worker(
  `const { parentPort, workerData } = require("node:worker_threads")
  const get = async (path) => {
    const response = await fetch(workerData.base + path, { headers: { authorization: workerData.authorization } })
    const body = await response.text()
    if (response.status !== 200) throw new Error("GET " + path + ": " + response.status + " " + body)
  }
  parentPort.on("message", (paths) => {
    const all = Promise.all(paths.map(get))
    setImmediate(() => parentPort.postMessage("sent"))
    all.then(() => parentPort.postMessage("done"), (error) => parentPort.postMessage(String(error)))
  })`,
  { eval: true, workerData: { base: server.base, authorization: `Bearer ${apiKey}` } }
)
// Sends `paths` from the other consoles; resolves once they are sent, with their answers' promise.
const fromConsoles = (paths: ReadonlyArray<string>) =>
  new Promise<{ readonly answered: Promise<void> }>((sent) => {
    const answered = new Promise<void>((resolve, reject) => {
      const listen = (message: string) => {
        if (message === "sent") return sent({ answered })
        consoles.off("message", listen)
        if (message === "done") resolve()
        else reject(new Error(message))
      }
      consoles.on("message", listen)
    })
    consoles.postMessage(paths)
  })

const series = async (path: string, rounds: number) => {
  const times: Array<number> = []
  for (let i = 0; i < rounds; i++) times.push((await timedGet(path)).ms)
  return times
}

const ms = (value: number) => `${value.toFixed(1)} ms`

try {
  // Never called: the deliveries are written as already ended. The first webhook gets
  // `DELIVERIES`, each of the others `OTHER_DELIVERIES`.
  const webhooks: Array<string> = []
  for (let i = 0; i < CONSOLES; i++) webhooks.push(await registerWebhook(server.base, `http://127.0.0.1:9/unused-${i}`))
  const webhookId = webhooks[0]!
  const counts = webhooks.map((_, i) => (i === 0 ? DELIVERIES : OTHER_DELIVERIES))
  const filling = performance.now()
  await runtime.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const now = Date.now()
      const weekAgo = now - 167 * 3_600_000
      // Each webhook's deliveries spread evenly over the week, numbered on from the previous
      // webhook's. Ids that sort before every real one land in the range of everything before
      // the migrations.
      const firsts = counts.map((_, i) => counts.slice(0, i).reduce((sum, count) => sum + count, 0))
      yield* sql`
        INSERT INTO deliveries (id, workspace_id, webhook_id, event_id, event_type, event_created_at, created_at,
                                status, due_at, attempts, latency_ms)
        SELECT 'dlv_' || lpad(k::text, 26, '0'), w.workspace_id, w.id, 'evt_' || lpad(k::text, 26, '0'),
               'tour-created', t / 1000, t / 1000, CASE WHEN n % 10 = 0 THEN 'failed' ELSE 'succeeded' END,
               t, '[]', 20 + n % 900
        FROM unnest(${webhooks}::text[], ${counts}::int[], ${firsts}::bigint[]) AS o (id, count, first)
             JOIN webhooks w ON w.id = o.id,
             generate_series(0, o.count - 1) n,
             LATERAL (SELECT o.first + n AS k,
                             ${weekAgo}::bigint + n::bigint * ${167 * 3_600_000}::bigint / o.count AS t) e`
      yield* Testing.fillDeliveryHours
      yield* sql`VACUUM (ANALYZE)`
      yield* sql`CHECKPOINT`
    })
  )
  console.log(
    `\nDelivery statistics over HTTP: ${DELIVERIES.toLocaleString("en")} deliveries of one webhook over 167 hours and ${OTHER_DELIVERIES.toLocaleString("en")} of each of ${CONSOLES - 1} more, PostgreSQL, the reference server (filled in ${((performance.now() - filling) / 1000).toFixed(1)} s)`
  )

  let pass = true
  const stats = (id: string, hours: number) => `/webhooks/${id}/stats?hours=${hours}`
  // Each webhook's week counts what was written for it, and every hour holds some.
  for (const [i, id] of webhooks.entries()) {
    const written = counts[i]!
    const week = JSON.parse((await timedGet(stats(id, 168))).body) as {
      succeeded: number
      failed: number
      buckets: ReadonlyArray<{ succeeded: number; failed: number }>
    }
    const empty = week.buckets.slice(0, -1).filter((bucket) => bucket.succeeded + bucket.failed === 0).length
    if (week.succeeded + week.failed !== written || empty > 0) {
      console.log(
        `  ${id}'s week counts ${week.succeeded + week.failed} deliveries, not ${written}, ${empty} hours empty`
      )
      pass = false
    }
  }
  for (const hours of [1, 24, 168]) {
    await series(stats(webhookId, hours), 5)
    const times = await series(stats(webhookId, hours), ROUNDS)
    console.log(
      `  stats, ${String(hours).padStart(3)} h: median ${ms(median(times))}, slowest ${ms(Math.max(...times))}`
    )
    pass = target(`stats ${hours} h, median under 100 ms (100 ÷ median)`, 100 / median(times), 1) && pass
  }

  await series("/webhooks", 5)
  const alone = await series("/webhooks", ROUNDS)
  const line = (times: ReadonlyArray<number>) =>
    `median ${ms(median(times))}, p99 ${ms(quantileOf(times, 0.99))}, slowest ${ms(Math.max(...times))}`
  console.log(`  GET /webhooks alone: ${line(alone)}`)
  // Each round: ten week-long statistics requests at once, and GET /webhooks sent right behind them.
  const besideTen = async (label: string, paths: ReadonlyArray<string>) => {
    const beside: Array<number> = []
    const bursts: Array<number> = []
    for (let round = 0; round < ROUNDS; round++) {
      const start = performance.now()
      const ten = await fromConsoles(paths)
      beside.push((await timedGet("/webhooks")).ms)
      await ten.answered
      bursts.push(performance.now() - start)
    }
    console.log(`  ${CONSOLES} statistics requests of 168 h at once, ${label}, until the last answers: ${line(bursts)}`)
    console.log(`  GET /webhooks sent with them: ${line(beside)}`)
    return target(
      `GET /webhooks beside ten statistics, ${label}: its p99 alone ÷ its median`,
      quantileOf(alone, 0.99) / median(beside),
      1
    )
  }
  pass =
    (await besideTen(
      "of one webhook",
      Array.from({ length: CONSOLES }, () => stats(webhookId, 168))
    )) && pass
  pass =
    (await besideTen(
      "one each of ten webhooks",
      webhooks.map((id) => stats(id, 168))
    )) && pass
  if (!pass) process.exitCode = 1
} finally {
  await consoles.terminate()
  server.stop()
  await server.exited
  await runtime.dispose()
  if (process.env.BENCH_KEEP_DB === undefined) await database.drop()
  else console.log(`  database kept for inspection: ${database.url}`)
}
