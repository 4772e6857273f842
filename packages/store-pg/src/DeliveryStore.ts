/**
 * The `DeliveryStore` port of `@waybill/webhooks` on PostgreSQL. Claims lock due deliveries with
 * `FOR UPDATE SKIP LOCKED` and lease them, so any number of dispatchers (in one process or many)
 * share the work without sending a delivery twice, except after a crash (a lease that expires
 * is taken over: at-least-once, with the same delivery id).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { Attempt, type DeliveryStatus } from "@waybill/webhooks/Delivery"
import { type ClaimedDelivery, DeliveryStore } from "@waybill/webhooks/DeliveryStore"
import * as Page from "@waybill/webhooks/Page"
import { Webhook } from "@waybill/webhooks/Webhook"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const decodeWebhook = Schema.decodeUnknownSync(Webhook)
const decodeAttempts = Schema.decodeUnknownSync(Schema.Array(Attempt))

interface ClaimedRow {
  readonly id: string
  readonly workspace_id: string
  readonly webhook_id: string
  readonly event_id: string
  readonly event_type: string
  readonly body: string
  readonly attempt_count: number
  readonly document: unknown
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<DeliveryStore, never, SqlClient.SqlClient> = Layer.effect(
  DeliveryStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return DeliveryStore.of({
      insert: (deliveries) =>
        deliveries.length === 0
          ? Effect.void
          : sql`INSERT INTO deliveries ${sql.insert(
              deliveries.map((delivery) => ({
                id: delivery.id,
                workspace_id: delivery.workspaceId,
                webhook_id: delivery.webhookId,
                event_id: delivery.eventId,
                event_type: delivery.eventType,
                created_at: delivery.createdAt,
                status: "pending",
                due_at: delivery.dueAt
              }))
            )}`.pipe(Effect.asVoid, Effect.orDie),
      claimDue: (request) =>
        sql
          .withTransaction(
            Effect.gen(function* () {
              // Per webhook at most `maxPerWebhook` of its earliest due deliveries (fairness: one busy
              // receiver cannot fill a claim), locked or skipped if another dispatcher holds them.
              const picked = yield* sql<{ id: string }>`
            SELECT c.id FROM webhooks w
            CROSS JOIN LATERAL (
              SELECT d.id, d.due_at, d.seq FROM deliveries d
              WHERE d.webhook_id = w.id AND d.workspace_id = w.workspace_id AND d.status = 'pending'
                AND d.due_at <= ${request.now} AND (d.lease_until IS NULL OR d.lease_until <= ${request.now})
              ORDER BY d.due_at, d.seq
              LIMIT ${request.maxPerWebhook}
              FOR UPDATE OF d SKIP LOCKED
            ) c
            WHERE NOT (w.id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(request.excludeWebhooks)}::json))))
            ORDER BY c.due_at, c.seq
            LIMIT ${request.limit}`
              if (picked.length === 0) return []
              const rows = yield* sql<ClaimedRow>`
            UPDATE deliveries d SET lease_until = ${request.leaseUntil}, lease_token = ${request.leaseToken}
            FROM events e, webhooks w
            WHERE d.id IN ${sql.in(picked.map((row) => row.id))}
              AND e.id = d.event_id AND w.id = d.webhook_id AND w.workspace_id = d.workspace_id
            RETURNING d.id, d.workspace_id, d.webhook_id, d.event_id, d.event_type, e.body,
                      jsonb_array_length(d.attempts) AS attempt_count, w.document`
              const order = new Map(picked.map((row, index) => [row.id, index]))
              return rows
                .map((row): ClaimedDelivery => {
                  const webhook = decodeWebhook(row.document)
                  return {
                    id: row.id,
                    workspaceId: row.workspace_id as WorkspaceId,
                    webhookId: row.webhook_id,
                    eventId: row.event_id,
                    eventType: row.event_type,
                    body: row.body,
                    attempts: row.attempt_count,
                    leaseToken: request.leaseToken,
                    target: { webhookId: webhook.id, url: webhook.url, auth: webhook.auth }
                  }
                })
                .sort((a, b) => order.get(a.id)! - order.get(b.id)!)
            })
          )
          .pipe(Effect.orDie),
      complete: (completions) =>
        sql
          .withTransaction(
            Effect.forEach(
              completions,
              (completion) =>
                sql<{ id: string }>`
            UPDATE deliveries
            SET attempts = attempts || ${JSON.stringify([completion.attempt])}::jsonb,
                status = ${completion.status satisfies DeliveryStatus},
                due_at = COALESCE(${completion.retryAt}::bigint, due_at),
                lease_until = NULL, lease_token = NULL
            WHERE id = ${completion.deliveryId} AND status = 'pending' AND lease_token = ${completion.leaseToken}
            RETURNING id`
            )
          )
          .pipe(
            Effect.map((results) => results.flatMap((rows) => rows.map((row) => row.id))),
            Effect.orDie
          ),
      list: (workspaceId, webhookId, query) =>
        sql<{ id: string; event_id: string; event_type: string; status: DeliveryStatus; attempts: unknown }>`
          SELECT id, event_id, event_type, status, attempts FROM deliveries
          WHERE workspace_id = ${workspaceId} AND webhook_id = ${webhookId}
            ${query.after === undefined ? sql`` : sql`AND id < ${query.after}`}
          ORDER BY id DESC LIMIT ${query.limit + 1}`.pipe(
          Effect.map((rows) =>
            Page.make(
              "dlv",
              rows.map((row) => ({
                id: row.id,
                eventId: row.event_id,
                eventType: row.event_type,
                status: row.status,
                attempts: decodeAttempts(row.attempts)
              })),
              query.limit,
              (log) => log.id
            )
          ),
          Effect.orDie
        ),
      deleteForWebhook: (workspaceId, webhookId) =>
        sql`DELETE FROM deliveries WHERE workspace_id = ${workspaceId} AND webhook_id = ${webhookId}`.pipe(
          Effect.asVoid,
          Effect.orDie
        )
    })
  })
)
