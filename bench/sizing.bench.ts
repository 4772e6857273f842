/**
 * Disk per event and per delivery (docs/operations.md, "Sizing"): the reference server takes
 * `BENCH_SIZING_EVENTS` (20,000) `tour-created` events through `POST /events`, each matched by two
 * webhooks whose receiver answers 200 at once, so every delivery ends `succeeded` after one attempt
 * (the common case). Measured once every delivery is recorded: on PostgreSQL each table with its
 * indexes and TOAST (`pg_total_relation_size`) as the writes left it (no VACUUM FULL), divided by
 * the events or deliveries it holds; on the embedded database (PGlite) the data directory's growth.
 * Without `DATABASE_URL` only the embedded figure is taken.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { apiKey, freePort, freshDatabase, registerWebhook, startServer } from "./server.js"

const EVENTS = Number(process.env.BENCH_SIZING_EVENTS ?? 20_000)
const CONCURRENCY = 16

const event = (i: number) =>
  JSON.stringify({
    type: "tour-created",
    payload: {
      tour: { id: `tour_${i}`, status: "planned", substatus: null, properties: { prop_region: "opt_north" } }
    }
  })

const receiverPort = await freePort()
const receiver = createServer((request, response) => {
  request.resume()
  request.on("end", () => response.writeHead(200).end())
})
await new Promise<void>((resolve) => receiver.listen(receiverPort, "127.0.0.1", resolve))
const receiverUrl = `http://127.0.0.1:${receiverPort}/hook`

// Publishes every event, `CONCURRENCY` at a time; then waits until `delivered()` counts them all.
const publishAll = async (base: string, delivered: () => Promise<number>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < EVENTS) {
        const body = event(next++)
        const response = await fetch(`${base}/events`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
          body
        })
        if (response.status !== 202) throw new Error(`POST /events answered ${response.status}`)
        await response.arrayBuffer()
      }
    })
  )
  for (let i = 0; i < 1_200 && (await delivered()) < 2 * EVENTS; i++) await new Promise((r) => setTimeout(r, 100))
  const count = await delivered()
  if (count < 2 * EVENTS) throw new Error(`only ${count} of ${2 * EVENTS} deliveries succeeded`)
}

const perRow = (bytes: number, rows: number) => `${(bytes / rows).toFixed(0).padStart(5)} B`
console.log(`\n${EVENTS} events × 2 webhooks, body ${event(0).length} bytes as posted`)

if (process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== "") {
  const database = await freshDatabase()
  const client = new pg.Client({ connectionString: database.url })
  try {
    const server = await startServer(database.url, { WAYBILL_LOG_LEVEL: "warn" })
    await client.connect()
    await client.query("SET search_path TO waybill")
    for (const _ of [1, 2]) await registerWebhook(server.base, receiverUrl)
    const started = (await client.query("SELECT pg_database_size(current_database())::bigint AS size")).rows[0].size
    await publishAll(server.base, async () =>
      Number((await client.query("SELECT count(*)::int AS n FROM deliveries WHERE status = 'succeeded'")).rows[0].n)
    )
    server.stop()
    await server.exited
    const { rows } = await client.query<{ table: string; rows: number; heap: string; indexes: string; total: string }>(
      // Summed over the table's time ranges (a partitioned table holds no rows itself).
      `SELECT c.relname AS table, sum(r.reltuples)::bigint AS rows, sum(pg_relation_size(t.relid)) AS heap,
              sum(pg_indexes_size(t.relid)) AS indexes, sum(pg_total_relation_size(t.relid)) AS total
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, pg_partition_tree(c.oid) t
       JOIN pg_class r ON r.oid = t.relid
       WHERE n.nspname = 'waybill' AND c.relname IN ('events', 'deliveries') AND t.isleaf
       GROUP BY c.relname`
    )
    const ended = (await client.query("SELECT pg_database_size(current_database())::bigint AS size")).rows[0].size
    console.log("  PostgreSQL (per row: table with its indexes and TOAST)")
    for (const row of rows) {
      const count = row.table === "events" ? EVENTS : 2 * EVENTS
      console.log(
        `  ${row.table.padEnd(11)} heap ${perRow(Number(row.heap), count)}   indexes ${perRow(Number(row.indexes), count)}   total ${perRow(Number(row.total), count)} per ${row.table === "events" ? "event" : "delivery"}`
      )
    }
    console.log(`  database grew ${perRow(Number(ended) - Number(started), EVENTS)} per event (with its 2 deliveries)`)
  } finally {
    await client.end().catch(() => {})
    await database.drop()
  }
}

const dataDir = mkdtempSync(join(tmpdir(), "waybill-sizing-"))
try {
  const duBytes = () => Number(spawnSync("du", ["-sb", dataDir], { encoding: "utf8" }).stdout.split("\t")[0])
  const server = await startServer({ dataDir }, { WAYBILL_LOG_LEVEL: "warn" })
  for (const _ of [1, 2]) await registerWebhook(server.base, receiverUrl)
  const started = duBytes()
  let webhookIds: Array<string> | undefined
  await publishAll(server.base, async () => {
    webhookIds ??= (
      (await (await fetch(`${server.base}/webhooks`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as {
        data: Array<{ id: string }>
      }
    ).data.map((webhook) => webhook.id)
    let succeeded = 0
    for (const id of webhookIds) {
      const stats = (await (
        await fetch(`${server.base}/webhooks/${id}/stats?hours=1`, { headers: { authorization: `Bearer ${apiKey}` } })
      ).json()) as { succeeded: number }
      succeeded += stats.succeeded
    }
    return succeeded
  })
  server.stop()
  await server.exited
  console.log(
    `  PGlite: the data directory grew ${perRow(duBytes() - started, EVENTS)} per event (with its 2 deliveries)`
  )
} finally {
  rmSync(dataDir, { recursive: true, force: true })
  receiver.close()
}
