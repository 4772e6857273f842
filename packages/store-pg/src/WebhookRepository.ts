/**
 * The `WebhookRepository` port of `@waybill/webhooks` on PostgreSQL.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Page from "@waybill/webhooks/Page"
import { Webhook } from "@waybill/webhooks/Webhook"
import { WebhookRepository } from "@waybill/webhooks/WebhookRepository"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const encode = Schema.encodeSync(Webhook)
const decode = Schema.decodeUnknownSync(Webhook)

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<WebhookRepository, never, SqlClient.SqlClient> = Layer.effect(
  WebhookRepository,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const documents = (rows: ReadonlyArray<{ readonly document: unknown }>) => rows.map((row) => decode(row.document))
    return WebhookRepository.of({
      insert: (webhook) =>
        sql`
          INSERT INTO webhooks (workspace_id, id, events, document, created_at)
          VALUES (${webhook.workspaceId}, ${webhook.id}, ARRAY(SELECT json_array_elements_text(${JSON.stringify(webhook.events)}::json)),
                  ${JSON.stringify(encode(webhook))}::json, ${webhook.createdAt})`.pipe(Effect.asVoid, Effect.orDie),
      get: (workspaceId, id) =>
        sql<{
          document: unknown
        }>`SELECT document FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${id}`.pipe(
          Effect.map((rows) => Option.fromNullable(documents(rows)[0])),
          Effect.orDie
        ),
      list: (workspaceId, query) =>
        sql<{ document: unknown }>`
          SELECT document FROM webhooks
          WHERE workspace_id = ${workspaceId} ${query.after === undefined ? sql`` : sql`AND id < ${query.after}`}
          ORDER BY id DESC LIMIT ${query.limit + 1}`.pipe(
          Effect.map((rows) => Page.make("whk", documents(rows), query.limit, (webhook) => webhook.id)),
          Effect.orDie
        ),
      delete: (workspaceId, id) =>
        sql<{ id: string }>`DELETE FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.orDie
        ),
      subscribed: (workspaceId, eventType) =>
        sql<{ document: unknown }>`
          SELECT document FROM webhooks
          WHERE workspace_id = ${workspaceId} AND events @> ARRAY[${eventType}::text]
          ORDER BY id`.pipe(Effect.map(documents), Effect.orDie)
    })
  })
)
