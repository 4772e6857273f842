/**
 * The delivery statistics query (`GET /webhooks/{id}/stats`) at 1,000,000 deliveries,
 * with and without its index: a one-off measurement, not part of `npm run bench` (it takes a
 * minute or two and measures a query, not throughput).
 *
 * In a schema of its own (`waybill_stats_bench`, dropped at the end) of the database named by
 * `DATABASE_URL`, the migrations run, then one `INSERT … SELECT generate_series(…)` writes
 * 1,000,000 deliveries of 20 webhooks over the last 7 days: half of them to one busy webhook
 * (about 71,000 in any 24 hours), the rest spread over 19 (about 3,700 in 24 hours each); 90 %
 * succeeded, 7 % failed, 3 % pending, each with one attempt. After `VACUUM ANALYZE`, the store's
 * own `stats` runs for the busy and a small webhook, over 24 and 168 hours: the median of 7 runs
 * (after 2 warm-ups), and the plan and execution time of the same statement under
 * `EXPLAIN (ANALYZE, BUFFERS)`. Variants: the index of migration 0013 (covering: `INCLUDE
 * (workspace_id, status, latency_ms)`), the same without `workspace_id` (the query's workspace
 * check then reads the table), a plain one on `(webhook_id, event_created_at)`, and none (what
 * the other indexes give). `BENCH_PLANS=1` prints every plan.
 *
 * Usage: `DATABASE_URL=postgres://… node --import tsx bench/stats-index.ts`
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Statement from "@effect/sql/Statement"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as Database from "@waybill/store-pg/Database"
import * as PgDeliveryStore from "@waybill/store-pg/PgDeliveryStore"
import * as DeliveryStats from "@waybill/webhooks/DeliveryStats"
import { DeliveryStore } from "@waybill/webhooks/DeliveryStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

const url = process.env.DATABASE_URL
if (url === undefined || url === "") {
  console.error("Set DATABASE_URL to a PostgreSQL database (a schema waybill_stats_bench is made and dropped in it).")
  process.exit(1)
}
const schema = "waybill_stats_bench"
const DELIVERIES = 1_000_000
const workspace = Schema.decodeSync(WorkspaceId)("bench")
const now = Math.floor(Date.now() / 1000)

const variants = [
  {
    name: "covering index (0013)",
    create:
      "CREATE INDEX deliveries_stats_idx ON deliveries (webhook_id, event_created_at) INCLUDE (workspace_id, status, latency_ms)"
  },
  {
    name: "covering, no workspace",
    create:
      "CREATE INDEX deliveries_stats_idx ON deliveries (webhook_id, event_created_at) INCLUDE (status, latency_ms)"
  },
  { name: "plain index", create: "CREATE INDEX deliveries_stats_idx ON deliveries (webhook_id, event_created_at)" },
  { name: "no stats index", create: undefined }
] as const

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const program = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const store = yield* DeliveryStore
  console.log(`inserting ${DELIVERIES.toLocaleString("en")} deliveries …`)
  const started = Date.now()
  // Webhook 0 gets every even row; the odd ones go round webhooks 1–19. Event times spread
  // evenly over the last 7 days.
  yield* sql`
    INSERT INTO deliveries (id, workspace_id, webhook_id, event_id, event_type, event_created_at, created_at, status,
                            due_at, attempts, latency_ms)
    SELECT 'dlv_' || lpad(g::text, 26, '0'), ${workspace},
           'whk_bench' || lpad((CASE WHEN g % 2 = 0 THEN 0 ELSE 1 + g % 19 END)::text, 2, '0'),
           'evt_' || lpad(g::text, 26, '0'), 'tour-created', t, t,
           CASE WHEN g % 100 < 90 THEN 'succeeded' WHEN g % 100 < 97 THEN 'failed' ELSE 'pending' END,
           t * 1000,
           jsonb_build_array(jsonb_build_object('at', t, 'statusCode', 200, 'durationMs', 12, 'error', null,
                                                'trigger', 'automatic')),
           CASE WHEN g % 100 < 97 THEN 20 + g % 480 END
    FROM generate_series(1, ${DELIVERIES}) g, LATERAL (SELECT ${now} - (g::bigint * 604800 / ${DELIVERIES}) AS t) e`
  console.log(`inserted in ${((Date.now() - started) / 1000).toFixed(1)} s`)

  // The plan of the store's own statement: each statement it runs is explained first.
  const plans: Array<string> = []
  const explained = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Statement.withTransformer(effect, (statement, client) => {
      const [text, params] = statement.compile()
      return Effect.as(
        Effect.tap(
          Statement.withTransformerDisabled(
            client.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params)
          ),
          (rows) => Effect.sync(() => plans.push(rows.map((row) => row["QUERY PLAN"]).join("\n")))
        ).pipe(Effect.orDie),
        statement
      )
    })

  const results: Array<Record<string, string | number>> = []
  for (const variant of variants) {
    yield* sql`DROP INDEX IF EXISTS deliveries_stats_idx`
    if (variant.create !== undefined) yield* sql.unsafe(variant.create)
    yield* sql`VACUUM ANALYZE deliveries`
    const [size] = yield* sql<{ size: string }>`
      SELECT pg_size_pretty(COALESCE(pg_relation_size(to_regclass('deliveries_stats_idx')), 0)) AS size`
    for (const [label, webhookId] of [
      ["busy webhook", "whk_bench00"],
      ["small webhook", "whk_bench07"]
    ] as const) {
      for (const hours of [24, 168]) {
        const stats = () => store.stats(workspace, webhookId, DeliveryStats.windowOf(now, hours))
        yield* stats()
        yield* stats()
        const times: Array<number> = []
        let counted = 0
        for (let i = 0; i < 7; i++) {
          const start = performance.now()
          const answer = yield* stats()
          times.push(performance.now() - start)
          counted = answer.succeeded + answer.failed + answer.pending + answer.held
        }
        plans.length = 0
        yield* explained(stats())
        const plan = plans[0] ?? ""
        const execution = /Execution Time: ([0-9.]+) ms/.exec(plan)?.[1] ?? "?"
        const access =
          plan
            .split("\n")
            .map((line) => line.trim().replace(/^->\s*/, ""))
            .find((line) => /Scan/.test(line))
            ?.replace(/\s+\(cost.*$/, "") ?? "?"
        results.push({
          variant: variant.name,
          "index size": size!.size,
          webhook: label,
          hours,
          deliveries: counted,
          "median ms": Number(median(times).toFixed(1)),
          "EXPLAIN ANALYZE ms": execution,
          access
        })
        if (process.env.BENCH_PLANS === "1") console.log(`\n${variant.name}, ${label}, ${hours} h\n${plan}`)
      }
    }
  }
  console.table(results)
  yield* sql`DROP INDEX IF EXISTS deliveries_stats_idx`
  yield* sql.unsafe(variants[0].create)
})

await Effect.runPromise(
  program.pipe(
    Effect.provide(
      PgDeliveryStore.layer.pipe(
        Layer.provideMerge(Database.layer({ _tag: "Postgres", url: Redacted.make(url), maxConnections: 2, schema }))
      )
    ),
    Effect.ensuring(
      Effect.promise(async () => {
        const pg = (await import("pg")).default
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        await client.end()
      })
    )
  )
)
