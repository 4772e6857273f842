/**
 * The `DraftRepository` port of `@waybill/drafts` on PostgreSQL.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { Draft } from "@waybill/drafts/Draft"
import { DraftRepository, makePage } from "@waybill/drafts/DraftRepository"
import { recordAll } from "@waybill/events/EventOutbox"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { channel } from "./EventOutbox.js"
import { insertEvents } from "./internal/eventRows.js"

const encode = Schema.encodeSync(Draft)
const decode = Schema.decodeUnknownSync(Draft)

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<DraftRepository, never, SqlClient.SqlClient> = Layer.effect(
  DraftRepository,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const one = (rows: ReadonlyArray<{ readonly document: unknown }>) =>
      Option.map(Option.fromNullable(rows[0]), (row) => decode(row.document))
    const columns = (draft: Draft) => ({
      status: draft.status,
      document: JSON.stringify(encode(draft)),
      endsAt: draft.recurringSchedule?.endsAt ?? null,
      updatedAt: draft.updatedAt
    })

    // The draft's insert, on its own or as a `WITH` clause of the statement that publishes it.
    const insertDraft = (workspaceId: WorkspaceId, draft: Draft) => {
      const c = columns(draft)
      return sql`
        INSERT INTO drafts (workspace_id, id, status, document, recurring, ends_at, created_at, updated_at)
        VALUES (${workspaceId}, ${draft.id}, ${c.status}, ${c.document}::json, ${draft.recurringSchedule !== null},
                ${c.endsAt}, ${draft.createdAt}, ${c.updatedAt})`
    }

    return DraftRepository.of({
      insert: (workspaceId, draft) => insertDraft(workspaceId, draft).pipe(Effect.asVoid, Effect.orDie),
      // The draft, its events and the notification in one statement: atomic without a
      // transaction, one round trip instead of four (BEGIN, the draft, the events, COMMIT).
      insertPublishing: (workspaceId, draft, events) =>
        Effect.gen(function* () {
          const recorded = yield* recordAll(workspaceId, events)
          yield* sql`
            WITH draft AS (${insertDraft(workspaceId, draft)}),
                 inserted AS (${insertEvents(sql, workspaceId, recorded)})
            SELECT pg_notify(${channel}, '') FROM (SELECT 1 FROM inserted LIMIT 1) AS written`
        }).pipe(Effect.orDie),
      get: (workspaceId, id) =>
        sql<{ document: unknown }>`SELECT document FROM drafts WHERE workspace_id = ${workspaceId} AND id = ${id}`.pipe(
          Effect.map(one),
          Effect.orDie
        ),
      getForUpdate: (workspaceId, id) =>
        sql<{ document: unknown }>`
          SELECT document FROM drafts WHERE workspace_id = ${workspaceId} AND id = ${id} FOR UPDATE`.pipe(
          Effect.map(one),
          Effect.orDie
        ),
      update: (workspaceId, draft) => {
        const c = columns(draft)
        return sql`
          UPDATE drafts SET status = ${c.status}, document = ${c.document}::json, ends_at = ${c.endsAt},
                 updated_at = ${c.updatedAt}
          WHERE workspace_id = ${workspaceId} AND id = ${draft.id}`.pipe(Effect.asVoid, Effect.orDie)
      },
      delete: (workspaceId, id) =>
        sql`DELETE FROM drafts WHERE workspace_id = ${workspaceId} AND id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
      list: (workspaceId: WorkspaceId, query) =>
        sql<{ document: unknown }>`
          SELECT document FROM drafts
          WHERE workspace_id = ${workspaceId}
            ${query.status === undefined ? sql`` : sql`AND status = ${query.status}`}
            ${query.after === undefined ? sql`` : sql`AND id < ${query.after}`}
          ORDER BY id DESC
          LIMIT ${query.limit + 1}`.pipe(
          Effect.map((rows) =>
            makePage(
              rows.map((row) => decode(row.document)),
              query.limit
            )
          ),
          Effect.orDie
        )
    })
  })
)
