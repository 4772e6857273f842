/**
 * Inserting deliveries (`DeliveryStore.insert`), and with them, in the same statement, a guard: a
 * data-modifying statement (fan-out moving its position under its lease) without whose row
 * nothing is inserted. One statement is atomic without a transaction: one round trip, not four.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { type NewDelivery, statusOf } from "@waybill/webhooks/DeliveryStore"
import * as Effect from "effect/Effect"
import { rollHours } from "./deliveryHours.js"
import * as TimeRanges from "./timeRanges.js"

/**
 * Inserts `deliveries` (one parameter for the whole batch; a second row for an id, the same event
 * fanned out again after a crash, is ignored) and counts them into `delivery_hours`. With a
 * `guard`, only when it returns a row: the answer says whether it did.
 */
export const insertDeliveries = (
  sql: SqlClient.SqlClient,
  deliveries: ReadonlyArray<NewDelivery>,
  guard?: Statement.Statement<unknown>
): Effect.Effect<boolean> =>
  TimeRanges.cover(
    sql,
    TimeRanges.deliveries,
    deliveries.map((delivery) => delivery.id)
  ).pipe(
    Effect.zipRight(sql<{ readonly held: boolean }>`
          ${guard === undefined ? sql`WITH` : sql`WITH advanced AS (${guard}), `} inserted AS (
          INSERT INTO deliveries (id, workspace_id, webhook_id, event_id, event_type, event_created_at, created_at,
                                  status, due_at, attempts, latency_ms, lease_until, lease_token, abandoned_attempts,
                                  ordering_key)
          SELECT id, workspace_id, webhook_id, event_id, event_type, event_created_at, created_at,
                 -- Held, as fan-out read the webhook, unless it has been enabled since: read
                 -- again under a lock, so an enable either waits for this insert to commit (and
                 -- then releases the row) or has committed before it (and the row is pending).
                 CASE WHEN status <> 'held' THEN status
                      WHEN (SELECT w.status FROM webhooks w WHERE w.workspace_id = d.workspace_id AND w.id = d.webhook_id FOR SHARE) = 'disabled' THEN 'held'
                      ELSE 'pending' END,
                 due_at, COALESCE(attempts, '[]'), latency_ms, lease_until, lease_token, abandoned, ordering_key
          FROM jsonb_to_recordset(${JSON.stringify(
            deliveries.map((delivery, n) => ({
              n,
              id: delivery.id,
              workspace_id: delivery.workspaceId,
              webhook_id: delivery.webhookId,
              event_id: delivery.eventId,
              event_type: delivery.eventType,
              event_created_at: delivery.eventCreatedAt,
              created_at: delivery.createdAt,
              status: delivery.outcome?.status ?? statusOf(delivery),
              due_at: delivery.dueAt,
              attempts: delivery.outcome === undefined ? null : [delivery.outcome.attempt],
              latency_ms: delivery.outcome?.latencyMs ?? null,
              lease_until: delivery.lease?.until ?? null,
              lease_token: delivery.lease?.token ?? null,
              abandoned: delivery.abandoned ?? 0,
              ordering_key: delivery.orderingKey ?? null
            }))
          )}::jsonb) AS d(n int, id text, workspace_id text, webhook_id text, event_id text,
            event_type text, event_created_at bigint, created_at bigint, status text, due_at bigint, attempts jsonb,
            latency_ms integer, lease_until bigint, lease_token text, abandoned integer, ordering_key text)
          ${guard === undefined ? sql`` : sql`WHERE EXISTS (SELECT 1 FROM advanced)`}
          ORDER BY n
          ON CONFLICT (id) DO NOTHING
          RETURNING webhook_id, event_created_at, status, latency_ms
          ), changed AS (SELECT *, 1 AS sign FROM inserted)
                    , rolled AS (${sql.literal(rollHours)})
          SELECT ${guard === undefined ? sql`true` : sql`EXISTS (SELECT 1 FROM advanced)`} AS held`),
    Effect.map((rows) => rows[0]?.held === true),
    Effect.orDie
  )
