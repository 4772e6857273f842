/**
 * The `RetentionStore` port on PostgreSQL and PGlite: events, deliveries and alerts kept in time
 * ranges (migration 0018), created ahead and dropped whole once older than the retention; open
 * deliveries of a range expire first, with one alert per webhook, in one transaction. One process
 * at a time runs it, under a lease (`retention_runs`). Rows kept from before time ranges (the range
 * of everything before) are deleted in short batches instead (docs/decisions/0113).
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Id from "@waybill/core/Id"
import * as RandomBytes from "@waybill/core/RandomBytes"
import * as Retention from "@waybill/webhooks/Retention"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TimeRanges from "./internal/timeRanges.js"

/** How long a run may hold the lease before another process may take over. @since 0.1.0 */
export const leaseMs = 5 * 60_000

/** Batches of `TimeRanges.trimBatch` rows a run deletes at most per table from the range of everything before. @since 0.1.0 */
export const trimBatchesPerRun = 100

interface Totals {
  events: number
  deliveries: number
  attempts: number
  alerts: number
}

/** The store over the `SqlClient` in context. @since 0.1.0 */
export const layer: Layer.Layer<Retention.RetentionStore, never, SqlClient.SqlClient> = Layer.effect(
  Retention.RetentionStore,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const owner = RandomBytes.hex(8)

    // Processes starting together plan the same ranges: one that lost the race to create a range
    // finds it made, and plans again; a failure then is a real one. Answers which were created.
    const createPlanned = (table: TimeRanges.RangedTable, now: number, retentionMs: number, tolerate: boolean) =>
      Effect.flatMap(TimeRanges.list(sql, table), (ranges) =>
        Effect.forEach(Retention.plan(ranges, now, retentionMs).create, (range) => {
          const created = sql.withTransaction(TimeRanges.create(sql, table, range)).pipe(Effect.as(true))
          return tolerate ? Effect.orElseSucceed(created, () => false) : created
        })
      )
    const prepare = (now: number, retentionMs: number) =>
      Effect.forEach(
        TimeRanges.tables,
        (table) =>
          Effect.flatMap(createPlanned(table, now, retentionMs, true), (created) =>
            created.every(Boolean) ? Effect.void : createPlanned(table, now, retentionMs, false)
          ),
        { discard: true }
      )

    const expire = (now: number, retentionMs: number) =>
      Effect.gen(function* () {
        const ranges = yield* TimeRanges.list(sql, TimeRanges.deliveries)
        const plan = Retention.plan(ranges, now, retentionMs)
        const rows: Array<TimeRanges.ExpiredRow> = []
        for (const range of plan.drop) rows.push(...(yield* TimeRanges.expire(sql, range.table, null)))
        const before = ranges.find((range) => range.from === null)
        if (plan.trimBelow !== null && before !== undefined) {
          const below = TimeRanges.bound(TimeRanges.deliveries.prefix, plan.trimBelow)
          rows.push(...(yield* TimeRanges.expire(sql, before.table, below)))
        }
        const byWebhook = new Map<string, Retention.Expired>()
        for (const row of rows) {
          const key = `${row.workspace_id} ${row.webhook_id}`
          const seen = byWebhook.get(key)
          const last = seen === undefined || row.delivery_id > seen.lastDeliveryId
          byWebhook.set(key, {
            workspaceId: row.workspace_id,
            webhookId: row.webhook_id,
            count: (seen?.count ?? 0) + Number(row.count),
            alertId: seen?.alertId ?? Id.makeAt("alr", now),
            lastDeliveryId: last ? row.delivery_id : seen.lastDeliveryId,
            lastEventId: last ? row.event_id : seen.lastEventId,
            lastEventType: last ? row.event_type : seen.lastEventType
          })
        }
        const expired = [...byWebhook.values()]
        if (expired.length > 0) {
          yield* TimeRanges.cover(
            sql,
            TimeRanges.alerts,
            expired.map((group) => group.alertId)
          )
          yield* sql`
            INSERT INTO alerts (id, workspace_id, webhook_id, delivery_id, event_id, event_type, reason, created_at)
            SELECT id, workspace_id, webhook_id, delivery_id, event_id, event_type, reason, created_at
            FROM json_to_recordset(${JSON.stringify(
              expired.map((group) => ({
                id: group.alertId,
                workspace_id: group.workspaceId,
                webhook_id: group.webhookId,
                delivery_id: group.lastDeliveryId,
                event_id: group.lastEventId,
                event_type: group.lastEventType,
                reason: Retention.expiryReason(group.count, retentionMs),
                created_at: Math.floor(now / 1000)
              }))
            )}::json) AS a(id text, workspace_id text, webhook_id text, delivery_id text, event_id text,
                           event_type text, reason text, created_at bigint)
            ON CONFLICT (id) DO NOTHING`
        }
        return expired
      })

    const remove = (now: number, retentionMs: number, totals: Totals) =>
      Effect.forEach(
        TimeRanges.tables,
        (table) =>
          Effect.gen(function* () {
            const ranges = yield* TimeRanges.list(sql, table)
            const plan = Retention.plan(ranges, now, retentionMs)
            const add = (counted: { readonly rows: number; readonly attempts: number }) => {
              totals[table.name] += counted.rows
              totals.attempts += counted.attempts
            }
            for (const range of plan.drop) {
              add(yield* TimeRanges.count(sql, table, range.table))
              yield* TimeRanges.drop(sql, table, range)
            }
            const before = ranges.find((range) => range.from === null)
            if (plan.trimBelow === null || before === undefined || plan.drop.includes(before)) return
            for (let batch = 0; batch < trimBatchesPerRun; batch++) {
              const trimmed = yield* TimeRanges.trim(sql, table, before.table, plan.trimBelow)
              add(trimmed)
              if (trimmed.rows < TimeRanges.trimBatch) break
            }
          }),
        { discard: true }
      )

    const lease = (now: number) =>
      Effect.map(
        sql`
          UPDATE retention_runs SET owner = ${owner}, lease_until = ${now + leaseMs}
          WHERE lease_until < ${now} OR owner = ${owner}
          RETURNING 1`,
        (rows) => rows.length > 0
      )

    const release = (now: number) =>
      sql`UPDATE retention_runs SET lease_until = 0, last_run_at = ${now} WHERE owner = ${owner}`

    return Retention.RetentionStore.of({
      prepare: (now, retentionMs) => prepare(now, retentionMs).pipe(Effect.orDie),
      run: (now, retentionMs) =>
        Effect.gen(function* () {
          if (!(yield* lease(now))) return null
          return yield* Effect.gen(function* () {
            const totals: Totals = { events: 0, deliveries: 0, attempts: 0, alerts: 0 }
            yield* prepare(now, retentionMs)
            if (retentionMs === 0) return { ...totals, expired: [] }
            const expired = yield* sql.withTransaction(expire(now, retentionMs))
            yield* remove(now, retentionMs, totals)
            // Statistics of the hours whose events are all past the retention go with their deliveries.
            yield* sql`DELETE FROM delivery_hours WHERE hour < ${Math.floor((now - retentionMs) / 3_600_000)}`
            return { ...totals, expired }
          }).pipe(Effect.ensuring(Effect.ignore(release(now))))
        }).pipe(Effect.orDie)
    })
  })
)
