import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import * as Id from "@waybill/core/Id"
import * as Metrics from "@waybill/core/Metrics"
import * as Retention from "@waybill/webhooks/Retention"
import { Effect, Layer, Metric } from "effect"
import * as PgRetention from "../src/PgRetention.js"
import { forEachBackend } from "./harness.js"

const minute = 60_000
const retention = 2 * minute
const size = Retention.rangeMs(retention)
// The start of a range, so the test knows which range each row falls in.
const T = Math.floor(1_798_000_000_000 / size) * size

const counted = (kind: Metrics.RemovedKind) =>
  Effect.map(Metric.value(Metric.tagged(Metrics.retentionRemoved, "kind", kind)), (state) => state.count)
const expiredCount = Effect.map(
  Metric.value(Metric.tagged(Metrics.deliveries, "status", "expired")),
  (state) => state.count
)

const rangesOf = (sql: SqlClient.SqlClient, table: string) =>
  Effect.map(
    sql<{ name: string }>`
      SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = ${table}::regclass ORDER BY c.relname`,
    (rows) => rows.map((row) => row.name)
  )

const event = (sql: SqlClient.SqlClient, at: number) =>
  sql`
    INSERT INTO events (id, workspace_id, type, created_at, body)
    VALUES (${Id.makeAt("evt", at)}, 'ws', 'tour-created', ${Math.floor(at / 1000)}, '{}')`

const delivery = (sql: SqlClient.SqlClient, webhookId: string, at: number, status: string, attempts = 0) =>
  Effect.gen(function* () {
    const eventId = Id.makeAt("evt", at)
    const id = Id.derive("dlv", eventId, Id.deriveKey(webhookId))
    yield* sql`
      INSERT INTO deliveries (id, workspace_id, webhook_id, event_id, event_type, created_at, status, due_at,
                              event_created_at, attempts)
      VALUES (${id}, 'ws', ${webhookId}, ${eventId}, 'tour-created', ${Math.floor(at / 1000)}, ${status}, ${at},
              ${Math.floor(at / 1000)}, ${JSON.stringify(Array.from({ length: attempts }, () => ({})))}::jsonb)`
    return { id, eventId }
  })

forEachBackend(
  "Retention by time ranges",
  (database) => Layer.provideMerge(PgRetention.layer, database),
  (it) => {
    it.effect(
      "ranges made ahead; open deliveries of an expired range end expired with one alert per webhook; the range is dropped whole",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const store = yield* Retention.RetentionStore
          yield* store.prepare(T, retention)
          for (const table of ["events", "deliveries", "alerts"]) {
            const ranges = yield* rangesOf(sql, table)
            // The range of everything before, the bridge to T, and ranges at least two minutes past T.
            assert.isAtLeast(ranges.length, 2 + (2 * minute) / size, ranges.join(" "))
            assert.include(ranges, `${table}_before`)
          }
          // Rows kept from before time ranges: an event and its open delivery in the range of everything before.
          yield* event(sql, 5)
          const old = yield* delivery(sql, "whk_old", 5, "pending")
          // Rows of the range at T.
          yield* event(sql, T + 1_000)
          yield* event(sql, T + 2_000)
          yield* delivery(sql, "whk_a", T + 1_000, "succeeded", 2)
          const pending = yield* delivery(sql, "whk_a", T + 1_000, "pending")
          const held = yield* delivery(sql, "whk_a", T + 2_000, "held")
          const other = yield* delivery(sql, "whk_b", T + 2_000, "pending", 1)
          yield* sql`
            INSERT INTO alerts VALUES (${Id.makeAt("alr", T + 3_000)}, 'ws', 'whk_a', 'dlv_x', 'evt_x', 'tour-created', 'http', ${Math.floor(T / 1000) + 3})`
          const before = {
            events: yield* counted("events"),
            deliveries: yield* counted("deliveries"),
            attempts: yield* counted("attempts"),
            alerts: yield* counted("alerts"),
            expired: yield* expiredCount
          }

          // Half a minute on: only the rows kept from before go, row by row; their open delivery expires first.
          // Half a minute on, nothing at T is old enough; the rows kept from before go (row by row
          // from the range of everything before, or whole with an older range), their open delivery
          // expired first. Then the range at T passes the window: expired, alerted, counted, dropped.
          const first = yield* Retention.run(T + 30_000, retention)
          const second = yield* Retention.run(T + size + retention + 1, retention)
          assert.isNotNull(first)
          assert.isNotNull(second)
          const total = (kind: "events" | "deliveries" | "attempts" | "alerts") => first![kind] + second![kind]
          assert.deepStrictEqual(
            {
              events: total("events"),
              deliveries: total("deliveries"),
              attempts: total("attempts"),
              alerts: total("alerts")
            },
            { events: 3, deliveries: 5, attempts: 3, alerts: 1 }
          )
          const expired = [...first!.expired, ...second!.expired]
          const oldExpiry = expired.find((group) => group.webhookId === "whk_old")
          assert.deepStrictEqual(
            [oldExpiry?.count, oldExpiry?.lastDeliveryId, oldExpiry?.lastEventId],
            [1, old.id, old.eventId]
          )
          const byWebhook = new Map(expired.map((group) => [group.webhookId, group]))
          assert.deepStrictEqual([...byWebhook.keys()].sort(), ["whk_a", "whk_b", "whk_old"])
          assert.strictEqual(byWebhook.get("whk_a")!.count, 2)
          assert.strictEqual(byWebhook.get("whk_a")!.lastDeliveryId, [pending.id, held.id].sort()[1])
          assert.strictEqual(byWebhook.get("whk_b")!.lastDeliveryId, other.id)
          for (const table of ["events", "deliveries", "alerts"]) {
            const ranges = yield* rangesOf(sql, table)
            assert.notInclude(ranges, `${table}_r${Id.format("evt", T, new Uint8Array(10)).slice(4, 14)}`)
          }
          assert.deepStrictEqual(yield* sql`SELECT id FROM deliveries`, [])
          assert.deepStrictEqual(yield* sql`SELECT id FROM events`, [])
          // The alerts of both runs are kept: they tell what expired.
          const alerts = yield* sql<{ webhook_id: string; delivery_id: string; event_id: string; reason: string }>`
            SELECT webhook_id, delivery_id, event_id, reason FROM alerts ORDER BY webhook_id`
          assert.deepStrictEqual(
            alerts.map((alert) => [alert.webhook_id, alert.reason]),
            [
              ["whk_a", "expired: 2 deliveries not delivered within the retention of 2m"],
              ["whk_b", "expired: 1 delivery not delivered within the retention of 2m"],
              ["whk_old", "expired: 1 delivery not delivered within the retention of 2m"]
            ]
          )
          assert.strictEqual(alerts[1]!.event_id, other.eventId)
          // Counted by kind, and each expiry as a delivery that ended expired.
          assert.strictEqual((yield* counted("events")) - before.events, 3)
          assert.strictEqual((yield* counted("deliveries")) - before.deliveries, 5)
          assert.strictEqual((yield* counted("attempts")) - before.attempts, 3)
          assert.strictEqual((yield* counted("alerts")) - before.alerts, 1)
          assert.strictEqual((yield* expiredCount) - before.expired, 4)
        })
    )

    it.effect("one process at a time: a run while another holds the lease does nothing", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const store = yield* Retention.RetentionStore
        yield* sql`UPDATE retention_runs SET owner = 'another', lease_until = ${T + 10 * minute}`
        assert.isNull(yield* store.run(T, retention))
        yield* sql`UPDATE retention_runs SET owner = NULL, lease_until = 0`
        assert.isNotNull(yield* store.run(T, retention))
      })
    )
  }
)
