/**
 * The storage gauges (`waybill_deliveries_pending`, `waybill_outbox_lag_seconds`,
 * `waybill_database_up`, `waybill_oldest_event_age_seconds`), read from the database when metrics are
 * read (docs/operations.md).
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Id from "@waybill/core/Id"
import * as Metrics from "@waybill/core/Metrics"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as StorageGauges from "./internal/storageGauges.js"

/** Reads the gauges and sets them (`Metrics.recordStorage`); never fails. @since 0.1.0 */
export const refresh = (timeoutMs = 2_000): Effect.Effect<void, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* StorageGauges.read(sql).pipe(
      Effect.timeoutFail({ duration: timeoutMs, onTimeout: () => "timeout" })
    )
    const now = yield* Clock.currentTimeMillis
    const recordedAt =
      row?.oldest_id === null || row === undefined
        ? undefined
        : Option.getOrElse(Id.timeOf(row.oldest_id), () => Number(row.oldest_at) * 1000)
    const firstAt = row?.first_id == null ? undefined : Option.getOrUndefined(Id.timeOf(row.first_id))
    Metrics.recordStorage({
      up: true,
      pending: Number(row?.pending ?? 0),
      lagSeconds: recordedAt === undefined ? 0 : Math.max(0, now - recordedAt) / 1000,
      oldestEventAgeSeconds: firstAt === undefined ? 0 : Math.max(0, now - firstAt) / 1000
    })
  }).pipe(Effect.catchAllCause(() => Effect.sync(() => Metrics.recordStorage({ up: false }))))
