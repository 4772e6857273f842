/**
 * The `FailureAlerts` port on PostgreSQL: every alert is stored and logged as one structured
 * warning, without secrets.
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { FailureAlerts } from "@waybill/webhooks/FailureAlerts"
import * as Page from "@waybill/webhooks/Page"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { sqlLayer } from "./internal/adapter.js"
import * as TimeRanges from "./internal/timeRanges.js"

interface Row {
  readonly id: string
  readonly webhook_id: string
  readonly delivery_id: string
  readonly event_id: string
  readonly event_type: string
  readonly reason: string
  readonly created_at: number
}

/** The alerts over the `SqlClient` in context. @since 0.1.0 */
export const layer: Layer.Layer<FailureAlerts, never, SqlClient.SqlClient> = sqlLayer(FailureAlerts, (sql) => ({
  raise: (workspaceId, alert) =>
    TimeRanges.cover(sql, TimeRanges.alerts, [alert.id]).pipe(
      Effect.zipRight(sql`
          INSERT INTO alerts (id, workspace_id, webhook_id, delivery_id, event_id, event_type, reason, created_at)
          VALUES (${alert.id}, ${workspaceId}, ${alert.webhookId}, ${alert.deliveryId}, ${alert.eventId},
                  ${alert.eventType}, ${alert.reason}, ${alert.createdAt})
          ON CONFLICT (id) DO NOTHING`),
      Effect.zipRight(
        Effect.logWarning("Webhook delivery failed after its retry").pipe(
          Effect.annotateLogs({
            alertId: alert.id,
            workspaceId,
            webhookId: alert.webhookId,
            deliveryId: alert.deliveryId,
            eventId: alert.eventId,
            eventType: alert.eventType,
            reason: alert.reason
          })
        )
      ),
      Effect.orDie
    ),
  list: (workspaceId, query) =>
    sql<Row>`
          SELECT * FROM alerts
          WHERE workspace_id = ${workspaceId}
            ${query.webhookId === undefined ? sql`` : sql`AND webhook_id = ${query.webhookId}`}
            ${query.after === undefined ? sql`` : sql`AND id < ${query.after}`}
          ORDER BY id DESC LIMIT ${query.limit + 1}`.pipe(
      Effect.map((rows) =>
        Page.make(
          "alr",
          rows.map((row) => ({
            id: row.id,
            webhookId: row.webhook_id,
            deliveryId: row.delivery_id,
            eventId: row.event_id,
            eventType: row.event_type,
            reason: row.reason,
            createdAt: row.created_at
          })),
          query.limit,
          (alert) => alert.id
        )
      ),
      Effect.orDie
    )
}))
