/**
 * Delivery statistics at 1,000,000 deliveries of one webhook (contract §8), on PostgreSQL: the
 * answer counts them all, and its statements read at most 168 rows of `delivery_hours` and no
 * delivery. What each statement read comes from its own plan under
 * `EXPLAIN (ANALYZE)`; how long it takes is `bench/at-scale.ts`'s to say.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Statement from "@effect/sql/Statement"
import { assert, describe, it, layer } from "@effect/vitest"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as DeliveryStats from "@waybill/webhooks/DeliveryStats"
import { DeliveryStore } from "@waybill/webhooks/DeliveryStore"
import { Effect, Layer, Schema } from "effect"
import * as PgDeliveryStore from "../src/PgDeliveryStore.js"
import * as Testing from "../src/Testing.js"

const postgres = Testing.backends().find((backend) => backend.name === "postgres")
const workspace = Schema.decodeSync(WorkspaceId)("stats-scale")
const webhookId = "whk_stats_scale"
const DELIVERIES = 1_000_000
const OPEN = 100

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Actual Rows"?: number
  readonly "Actual Loops"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}

// Rows each scan of a table (a range of `deliveries` counts as `deliveries`) produced, in all.
const rowsRead = (node: PlanNode, into: Map<string, number>) => {
  const relation = node["Relation Name"]
  if (relation !== undefined) {
    const table = relation.startsWith("deliveries") ? "deliveries" : relation
    into.set(table, (into.get(table) ?? 0) + (node["Actual Rows"] ?? 0) * (node["Actual Loops"] ?? 1))
  }
  for (const child of node.Plans ?? []) rowsRead(child, into)
}

// Runs `effect`, each of its statements also under EXPLAIN (ANALYZE): the rows read per table.
const reads = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const read = new Map<string, number>()
    const result = yield* Statement.withTransformer(effect, (statement, client) => {
      const [text, params] = statement.compile()
      return Effect.as(
        Effect.tap(
          Statement.withTransformerDisabled(
            client.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> | string }>(
              `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
              params
            )
          ),
          (rows) =>
            Effect.sync(() => {
              const plan = rows[0]!["QUERY PLAN"]
              const parsed = typeof plan === "string" ? JSON.parse(plan) : plan
              rowsRead(parsed[0].Plan, read)
            })
        ).pipe(Effect.orDie),
        statement
      )
    })
    return { result, read }
  })

const name = "Delivery statistics at 1,000,000 deliveries of one webhook [postgres]"

if (postgres === undefined) {
  describe(name, () => {
    it.skip("NOT RUN: DATABASE_URL is not set", () => {})
  })
} else {
  layer(PgDeliveryStore.layer.pipe(Layer.provideMerge(Testing.layer(postgres))), { timeout: "300 seconds" })(
    name,
    (it) => {
      it.effect(
        "any window reads at most 168 hour rows and no delivery",
        () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const now = Date.now()
            const weekAgo = now - 167 * 3_600_000
            // The statistics read the webhook's row only for its workspace.
            yield* sql`
            INSERT INTO webhooks (workspace_id, id, events, document, created_at)
            VALUES (${workspace}, ${webhookId}, '{tour-created}', '{}', ${Math.floor(now / 1000)})`
            // Spread over the last 167 hours, in the range of everything before the migrations' ranges.
            yield* sql`
            INSERT INTO deliveries (id, workspace_id, webhook_id, event_id, event_type, event_created_at, created_at,
                                    status, due_at, attempts, latency_ms)
            SELECT 'dlv_' || lpad(n::text, 26, '0'), ${workspace}, ${webhookId}, 'evt_' || lpad(n::text, 26, '0'),
                   'tour-created', t / 1000, t / 1000,
                   CASE WHEN n < ${OPEN} THEN 'pending' WHEN n % 10 = 0 THEN 'failed' ELSE 'succeeded' END,
                   t, '[]', CASE WHEN n < ${OPEN} THEN NULL ELSE 20 + n % 900 END
            FROM generate_series(0, ${DELIVERIES - 1}) n,
                 LATERAL (SELECT ${weekAgo}::bigint + n::bigint * ${167 * 3_600_000}::bigint / ${DELIVERIES} AS t) e`
            yield* Testing.fillDeliveryHours
            yield* sql`ANALYZE deliveries`
            const store = yield* DeliveryStore
            for (const hours of [1, 24, 168]) {
              const window = DeliveryStats.windowOf(Math.floor(now / 1000), hours)
              const { result, read } = yield* reads(store.stats(workspace, webhookId, window))
              assert.isAtMost(read.get("delivery_hours") ?? 0, hours, `${hours} h: hour rows read`)
              assert.strictEqual(read.get("deliveries") ?? 0, 0, `${hours} h: deliveries read`)
              if (hours === 168) {
                assert.deepStrictEqual(
                  [result.succeeded + result.failed, result.pending, result.held],
                  [DELIVERIES - OPEN, OPEN, 0]
                )
                assert.strictEqual(result.failed, (DELIVERIES - OPEN) / 10)
              }
            }
          }),
        300_000
      )
    }
  )
}
