/**
 * Retention under a steady load (docs/benchmarks.md, "Retention"): the reference server on
 * PostgreSQL with `WAYBILL_RETENTION` (`BENCH_RETENTION`, 2m) takes `BENCH_RETENTION_RATE` (100)
 * `tour-created` events a second through `POST /events` for `BENCH_RETENTION_MINUTES` (10), each
 * delivered to two webhooks. Every 30 s: the database's size, the rows and the size of events,
 * deliveries and alerts (every range with its indexes), and how many ranges there are. Each
 * request's latency is put beside whether a removal run held its lease while it was answered
 * (polled every 20 ms), for the p99 with and without a removal. Needs `DATABASE_URL`.
 */
import { createServer } from "node:http"
import pg from "pg"
import { apiKey, freePort, freshDatabase, registerWebhook, startServer } from "./server.js"

if (process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === "") {
  console.log("retention: skipped (needs DATABASE_URL)")
  process.exit(0)
}

const RETENTION = process.env.BENCH_RETENTION ?? "2m"
const RATE = Number(process.env.BENCH_RETENTION_RATE ?? 100)
const MINUTES = Number(process.env.BENCH_RETENTION_MINUTES ?? 10)
const SAMPLE_MS = 30_000

const receiverPort = await freePort()
const receiver = createServer((request, response) => {
  request.resume()
  request.on("end", () => response.writeHead(200).end())
})
await new Promise<void>((resolve) => receiver.listen(receiverPort, "127.0.0.1", resolve))

const database = await freshDatabase()
const client = new pg.Client({ connectionString: database.url })
const server = await startServer(database.url, { WAYBILL_LOG_LEVEL: "warn", WAYBILL_RETENTION: RETENTION })
await client.connect()
await client.query("SET search_path TO waybill")
for (const _ of [1, 2]) await registerWebhook(server.base, `http://127.0.0.1:${receiverPort}/hook`)

// When a removal run held the lease: [start, end) in ms since the epoch, polled.
const removals: Array<[number, number]> = []
let polling = true
const poll = (async () => {
  let since: number | undefined
  while (polling) {
    const { rows } = await client.query<{ held: boolean }>(
      "SELECT lease_until > (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS held FROM retention_runs"
    )
    const now = Date.now()
    if (rows[0]?.held && since === undefined) since = now - 10
    if (!rows[0]?.held && since !== undefined) {
      removals.push([since, now])
      since = undefined
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
})()

const sizes = async () => {
  const { rows } = await client.query<{ table: string; rows: string; bytes: string; ranges: number }>(
    `SELECT p.relname AS table, sum(c.reltuples)::bigint AS rows,
            sum(pg_total_relation_size(t.relid))::bigint AS bytes, count(*)::int - 1 AS ranges
     FROM pg_class p, pg_partition_tree(p.oid) t JOIN pg_class c ON c.oid = t.relid
     WHERE p.relnamespace = 'waybill'::regnamespace AND p.relname IN ('events', 'deliveries', 'alerts')
     GROUP BY p.relname ORDER BY p.relname`
  )
  const exact = await client.query<{ events: number; deliveries: number }>(
    "SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM deliveries)::int AS deliveries"
  )
  const total = await client.query<{ size: string }>("SELECT pg_database_size(current_database()) AS size")
  return { tables: rows, exact: exact.rows[0]!, database: Number(total.rows[0]!.size) }
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`
const started = Date.now()
const latencies: Array<{ at: number; ms: number }> = []
let failures = 0
const body = (i: number) =>
  JSON.stringify({
    type: "tour-created",
    payload: { tour: { id: `tour_${i}`, status: "planned", substatus: null, properties: { prop_region: "opt_north" } } }
  })

console.log(`\nretention ${RETENTION}, ${RATE} events/s × 2 webhooks for ${MINUTES} min (PostgreSQL)`)
console.log("  minute  database   events rows  deliveries rows  events+deliveries+alerts  ranges (e/d/a)")
const report = async () => {
  const now = await sizes()
  const byName = new Map(now.tables.map((row) => [row.table, row]))
  const bytes = now.tables.reduce((sum, row) => sum + Number(row.bytes), 0)
  console.log(
    `  ${((Date.now() - started) / 60_000).toFixed(1).padStart(6)}  ${mb(now.database).padStart(9)}  ${String(now.exact.events).padStart(11)}  ${String(now.exact.deliveries).padStart(15)}  ${mb(bytes).padStart(24)}  ${["events", "deliveries", "alerts"].map((name) => byName.get(name)?.ranges ?? 0).join("/")}`
  )
}
await report()
const sampler = setInterval(() => void report(), SAMPLE_MS)

// An open loop: requests leave on schedule whatever the answers take.
let sent = 0
const inFlight = new Set<Promise<void>>()
const deadline = started + MINUTES * 60_000
while (Date.now() < deadline) {
  const due = started + (sent * 1000) / RATE
  const wait = due - Date.now()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  const at = Date.now()
  const request = fetch(`${server.base}/events`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
    body: body(sent++)
  })
    .then(async (response) => {
      await response.arrayBuffer()
      if (response.status !== 202) failures++
      latencies.push({ at, ms: Date.now() - at })
    })
    .catch(() => {
      failures++
    })
  inFlight.add(request)
  void request.finally(() => inFlight.delete(request))
}
await Promise.all(inFlight)
clearInterval(sampler)
await report()
polling = false
await poll

const p99 = (values: Array<number>) => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!
}
const during = (entry: { at: number; ms: number }) =>
  removals.some(([from, to]) => entry.at < to && entry.at + entry.ms > from)
const inRemoval = latencies.filter(during).map((entry) => entry.ms)
const outside = latencies.filter((entry) => !during(entry)).map((entry) => entry.ms)
console.log(
  `  POST /events: ${latencies.length} answered, ${failures} failed; p99 ${p99(outside)} ms without a removal (${outside.length}), ${p99(inRemoval)} ms during one (${inRemoval.length}; ${removals.length} runs, longest ${Math.max(0, ...removals.map(([from, to]) => to - from))} ms)`
)
server.stop()
await server.exited
await client.end()
await database.drop()
receiver.close()
