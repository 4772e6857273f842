/**
 * The conversion to time ranges on a populated database (docs/operations.md, "Upgrades"): a fresh
 * PostgreSQL database migrated to 0017 gets `BENCH_CONVERSION_ROWS` (1,000,000) events over the last
 * ten days and as many deliveries (90 % succeeded, the rest pending, held or failed) and 10,000
 * alerts; then, while a client of the previous release's kind inserts an event every 5 ms with its
 * prepared statement, the current migrations run (`Migrations.runIn`). Reports the time of each
 * part, the writer's worst and p99 insert latency during the run, and that every row is still there
 * (the writer's inserts after the swap land in the new ranges). Needs `DATABASE_URL`.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Id from "@waybill/core/Id"
import * as Migrations from "@waybill/store-pg/Migrations"
import { Effect, Redacted } from "effect"
import pg from "pg"
import { freshDatabase } from "./server.js"

if (process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === "") {
  console.log("conversion: skipped (needs DATABASE_URL)")
  process.exit(0)
}

const ROWS = Number(process.env.BENCH_CONVERSION_ROWS ?? 1_000_000)
const database = await freshDatabase()

const withSql = <A>(use: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(PgClient.make({ url: Redacted.make(database.url), maxConnections: 1 }), (sql) =>
        Effect.provideService(use, SqlClient.SqlClient, sql)
      )
    ).pipe(Effect.provide(Reactivity.layer))
  )

// The schema as the previous release left it: every migration up to 0017.
await withSql(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE SCHEMA waybill`
    yield* sql`SET search_path TO waybill`
    yield* Migrator.make({})({
      loader: Migrator.fromRecord(
        Object.fromEntries(Object.entries(Migrations.migrations).filter(([key]) => key <= "0017"))
      ),
      table: Migrations.table
    })
  })
)

const admin = new pg.Client({ connectionString: database.url })
await admin.connect()
await admin.query("SET search_path TO waybill")
const time = async <A>(what: string, run: () => Promise<A>) => {
  const started = Date.now()
  const result = await run()
  console.log(`  ${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return result
}

console.log(`\nconversion of ${ROWS.toLocaleString("en")} events and deliveries to time ranges (PostgreSQL)`)
const now = Date.now()
const span = 10 * 24 * 3_600_000
await time("filling", async () => {
  // Ids as Waybill makes them: 10 base-32 characters of epoch ms, 16 of a tail (here a counter).
  await admin.query(`
    CREATE FUNCTION pg_temp.b32(v bigint, n int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz', ((v >> (5 * (n - 1 - i))) & 31)::int + 1, 1), '' ORDER BY i)
      FROM generate_series(0, n - 1) AS i $$`)
  await admin.query(
    `INSERT INTO events (id, workspace_id, type, created_at, body)
     SELECT 'evt_' || pg_temp.b32(t, 10) || '0000' || pg_temp.b32(i, 12), 'ws', 'tour-created', t / 1000,
            '{"id":"x","type":"tour-created","payload":{"tour":{"id":"tour_' || i || '"}}}'
     FROM generate_series(1, $1::int) AS i, LATERAL (SELECT $2::bigint + i * ($3::bigint / $1::int) AS t) AS at`,
    [ROWS, now - span, span]
  )
  await admin.query(
    `INSERT INTO deliveries (id, workspace_id, webhook_id, event_id, event_type, created_at, status, due_at,
                             event_created_at, attempts)
     SELECT 'dlv_' || pg_temp.b32(t, 10) || '0001' || pg_temp.b32(i, 12), 'ws', 'whk_' || (i % 4),
            'evt_' || pg_temp.b32(t, 10) || '0000' || pg_temp.b32(i, 12), 'tour-created', t / 1000,
            CASE WHEN i % 10 = 0 THEN 'pending' WHEN i % 10 = 1 THEN 'held' WHEN i % 50 = 2 THEN 'failed' ELSE 'succeeded' END,
            t, t / 1000, '[{"status":200}]'::jsonb
     FROM generate_series(1, $1::int) AS i, LATERAL (SELECT $2::bigint + i * ($3::bigint / $1::int) AS t) AS at`,
    [ROWS, now - span, span]
  )
  await admin.query(
    `INSERT INTO alerts (id, workspace_id, webhook_id, delivery_id, event_id, event_type, reason, created_at)
     SELECT 'alr_' || pg_temp.b32(t, 10) || '0000' || pg_temp.b32(i, 12), 'ws', 'whk_1', 'dlv_x', 'evt_x',
            'tour-created', 'http', t / 1000
     FROM generate_series(1, 10000) AS i, LATERAL (SELECT $1::bigint + i * ($2::bigint / 10000) AS t) AS at`,
    [now - span, span]
  )
  await admin.query("VACUUM ANALYZE")
})
const counts = async () =>
  (
    await admin.query<{ events: number; deliveries: number; alerts: number; held: number }>(
      `SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM deliveries)::int AS deliveries,
              (SELECT count(*) FROM alerts)::int AS alerts,
              (SELECT count(*) FROM deliveries WHERE status = 'held')::int AS held`
    )
  ).rows[0]!
const before = await counts()

// A process of the previous release: its prepared insert, every 5 ms, through the whole conversion.
const writer = new pg.Client({ connectionString: database.url })
await writer.connect()
await writer.query("SET search_path TO waybill")
const latencies: Array<number> = []
let writing = true
let written = 0
let failed = 0
const writes = (async () => {
  while (writing) {
    const started = Date.now()
    try {
      await writer.query({
        name: "publish",
        text: "INSERT INTO events (id, workspace_id, type, created_at, body) VALUES ($1, 'ws', 'tour-created', $2, '{}')",
        values: [Id.makeAt("evt", Date.now()), Math.floor(Date.now() / 1000)]
      })
      written++
    } catch (error) {
      failed++
      console.log(`  the previous release's insert failed: ${(error as Error).message}`)
    }
    latencies.push(Date.now() - started)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
})()

await new Promise((resolve) => setTimeout(resolve, 500))
const duringFrom = latencies.length
await time("migrating (the check validated outside the transaction, then 0018)", () =>
  withSql(Migrations.runIn("waybill"))
)
const duringTo = latencies.length
await new Promise((resolve) => setTimeout(resolve, 500))
writing = false
await writes
await writer.end()

const during = latencies.slice(duringFrom, duringTo).sort((a, b) => a - b)
const after = await counts()
const ranges = await admin.query<{ table: string; name: string }>(
  `SELECT e.tableoid::regclass::text AS table, e.id AS name FROM events e ORDER BY e.id DESC LIMIT 1`
)
console.log(
  `  the previous release's inserts during the migration: ${during.length}, worst ${during.at(-1)} ms, p99 ${during[Math.floor(during.length * 0.99)]} ms; ${failed} failed`
)
console.log(
  `  rows before: ${before.events} events, ${before.deliveries} deliveries (${before.held} held), ${before.alerts} alerts; after: ${after.events} events (${after.events - before.events} written meanwhile, ${written} by the writer), ${after.deliveries} deliveries (${after.held} held), ${after.alerts} alerts`
)
console.log(`  the writer's last event is in ${ranges.rows[0]?.table}`)
if (
  after.deliveries !== before.deliveries ||
  after.alerts !== before.alerts ||
  after.events !== before.events + written
) {
  console.log("  ROWS LOST")
  process.exitCode = 1
}
await admin.end()
await database.drop()
