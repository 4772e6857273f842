/** The `WebhookRepository` port on PostgreSQL. @since 0.1.0 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Page from "@waybill/webhooks/Page"
import { Webhook } from "@waybill/webhooks/Webhook"
import { WebhookRepository } from "@waybill/webhooks/WebhookRepository"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { sqlLayer } from "./internal/adapter.js"
import { type WebhookRow, webhookColumns, webhookOf } from "./internal/webhookRows.js"

const encode = Schema.encodeSync(Webhook)

/** The webhook repository over the `SqlClient` in context. @since 0.1.0 */
export const layer: Layer.Layer<WebhookRepository, never, SqlClient.SqlClient> = sqlLayer(WebhookRepository, (sql) => {
  // The revision (edits raise it atomically) and the flow control (claims and automatic
  // disabling read and change it in SQL) live in their own columns; the document holds the rest.
  const documents = (rows: ReadonlyArray<WebhookRow>) => rows.map(webhookOf)
  const stored = (webhook: Webhook) => {
    const {
      revision: _revision,
      status: _status,
      disabledReason: _reason,
      disabledAt: _at,
      rateLimitPerSecond: _rate,
      ordering: _ordering,
      ...document
    } = encode(webhook)
    return JSON.stringify(document)
  }
  const disabled = (webhook: Webhook) =>
    webhook.status === "disabled"
      ? { reason: webhook.disabledReason ?? "manual", at: webhook.disabledAt ?? webhook.createdAt }
      : { reason: null, at: null }
  const select = sql.literal(webhookColumns)
  // Where the sweep finds a previous secret whose overlap has ended (0009).
  const previousExpiresAt = (webhook: Webhook) =>
    webhook.auth.type === "hmac" ? (webhook.auth.previous?.expiresAt ?? null) : null
  return {
    // Count and insert under a lock per workspace, so two registrations at the limit minus one
    // never make one too many.
    insert: (webhook, limit) =>
      sql
        .withTransaction(
          Effect.zipRight(
            sql`SELECT pg_advisory_xact_lock(hashtext('waybill.webhooks'), hashtext(${webhook.workspaceId}))`,
            sql<{ id: string }>`
                INSERT INTO webhooks (workspace_id, id, events, document, created_at, previous_secret_expires_at,
                                      status, disabled_reason, disabled_at, rate_limit_per_second, ordering)
                SELECT ${webhook.workspaceId}, ${webhook.id}, ARRAY(SELECT json_array_elements_text(${JSON.stringify(webhook.events)}::json)),
                       ${stored(webhook)}::json, ${webhook.createdAt}, ${previousExpiresAt(webhook)},
                       ${webhook.status}, ${disabled(webhook).reason}, ${disabled(webhook).at},
                       ${webhook.rateLimitPerSecond}, ${webhook.ordering}
                WHERE (SELECT count(*) FROM webhooks WHERE workspace_id = ${webhook.workspaceId}) < ${limit}
                RETURNING id`
          )
        )
        .pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.orDie
        ),
    get: (workspaceId, id) =>
      sql<WebhookRow>`SELECT ${select} FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${id}`.pipe(
        Effect.map((rows) => Option.fromNullable(documents(rows)[0])),
        Effect.orDie
      ),
    list: (workspaceId, query) =>
      sql<WebhookRow>`
          SELECT ${select} FROM webhooks
          WHERE workspace_id = ${workspaceId} ${query.after === undefined ? sql`` : sql`AND id < ${query.after}`}
          ORDER BY id DESC LIMIT ${query.limit + 1}`.pipe(
        Effect.map((rows) => Page.make("whk", documents(rows), query.limit, (webhook) => webhook.id)),
        Effect.orDie
      ),
    update: (webhook) =>
      sql<WebhookRow>`
          UPDATE webhooks
          SET events = ARRAY(SELECT json_array_elements_text(${JSON.stringify(webhook.events)}::json)),
              document = jsonb_set(${stored(webhook)}::jsonb, '{createdAt}', to_jsonb(created_at))::json,
              previous_secret_expires_at = ${previousExpiresAt(webhook)},
              status = ${webhook.status}, disabled_reason = ${disabled(webhook).reason},
              disabled_at = ${disabled(webhook).at}, rate_limit_per_second = ${webhook.rateLimitPerSecond},
              ordering = ${webhook.ordering},
              -- Enabling starts the count of failures in a row afresh.
              failure_streak = CASE WHEN ${webhook.status} = 'enabled' AND status = 'disabled' THEN 0 ELSE failure_streak END,
              revision = revision + 1
          WHERE workspace_id = ${webhook.workspaceId} AND id = ${webhook.id} AND revision = ${webhook.revision}
          RETURNING ${select}`.pipe(
        Effect.map((rows) => Option.fromNullable(documents(rows)[0])),
        Effect.orDie
      ),
    // The document loses its `auth.previous` (the sealed secret is gone, not hidden) and the
    // revision moves on, so every process reads the webhook again and forgets the secret.
    deleteExpiredSecrets: (now, limit) =>
      sql<{ id: string }>`
          WITH due AS (
            SELECT workspace_id, id FROM webhooks
            WHERE previous_secret_expires_at <= ${now}
            ORDER BY previous_secret_expires_at
            LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          )
          UPDATE webhooks w
          SET document = (w.document::jsonb #- '{auth,previous}')::json,
              previous_secret_expires_at = NULL,
              revision = w.revision + 1
          FROM due
          WHERE w.workspace_id = due.workspace_id AND w.id = due.id
          RETURNING w.id`.pipe(
        Effect.map((rows) => rows.length),
        Effect.orDie
      ),
    // Each row is locked while its count moves, so several processes' counts add up; a webhook
    // reaching the threshold is disabled in the same step, with a new revision.
    recordEndings: (endings, threshold, now) => {
      // Evaluated on the row as it is when the update takes it (the old values).
      const disables = sql.literal(
        `(w.status = 'enabled' AND ${Math.floor(threshold)} > 0 AND (CASE WHEN c.reset THEN c.failures ELSE w.failure_streak + c.failures END) >= ${Math.floor(threshold)})`
      )
      return endings.length === 0
        ? Effect.succeed([])
        : sql<WebhookRow & { readonly disabled_now: boolean }>`
          UPDATE webhooks w
          SET failure_streak = CASE WHEN c.reset THEN c.failures ELSE w.failure_streak + c.failures END,
              status = CASE WHEN ${disables} THEN 'disabled' ELSE w.status END,
              disabled_reason = CASE WHEN ${disables} THEN 'failing' ELSE w.disabled_reason END,
              disabled_at = CASE WHEN ${disables} THEN ${now} ELSE w.disabled_at END,
              revision = w.revision + CASE WHEN ${disables} THEN 1 ELSE 0 END
          FROM jsonb_to_recordset(${JSON.stringify(
            [...endings].sort((x, y) => (x.webhookId < y.webhookId ? -1 : x.webhookId > y.webhookId ? 1 : 0))
          )}::jsonb) AS c("workspaceId" text, "webhookId" text, reset boolean, failures int)
          WHERE w.workspace_id = c."workspaceId" AND w.id = c."webhookId"
          RETURNING ${select}, (w.status = 'disabled' AND w.disabled_reason = 'failing' AND w.disabled_at = ${now}) AS disabled_now`.pipe(
            Effect.map((rows) => documents(rows.filter((row) => row.disabled_now))),
            Effect.orDie
          )
    },
    delete: (workspaceId, id) =>
      sql<{ id: string }>`DELETE FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length === 1),
        Effect.orDie
      ),
    subscribed: (workspaceId, eventType) =>
      sql<WebhookRow>`
          SELECT ${select} FROM webhooks
          WHERE workspace_id = ${workspaceId} AND events @> ARRAY[${eventType}::text]
          ORDER BY id`.pipe(Effect.map(documents), Effect.orDie)
  }
})
