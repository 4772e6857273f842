/**
 * The `DraftRepository` port of `@waybill/drafts` on PostgreSQL.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as GroupCommit from "@waybill/core/GroupCommit"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { Draft, toJson } from "@waybill/drafts/Draft"
import { DraftRepository, makePage } from "@waybill/drafts/DraftRepository"
import { type NewEvent, recordAll } from "@waybill/events/EventOutbox"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { insertEvents } from "./internal/eventRows.js"

const decode = Schema.decodeUnknownSync(Draft)

// A new draft and the events it raised, as the group commit queues them.
interface NewDraft {
  readonly workspaceId: WorkspaceId
  readonly draft: Draft
  readonly events: ReadonlyArray<NewEvent>
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<DraftRepository, never, SqlClient.SqlClient> = Layer.scoped(
  DraftRepository,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const one = (rows: ReadonlyArray<{ readonly document: unknown }>) =>
      Option.map(Option.fromNullable(rows[0]), (row) => decode(row.document))
    // A draft's row as JSON text, its document inside as the draft's own text (`toJson`,
    // written once for the draft, its answer and its event) rather than serialized again.
    const rowJson = (draft: Draft) =>
      `${JSON.stringify({
        id: draft.id,
        status: draft.status,
        recurring: draft.recurringSchedule !== null,
        ends_at: draft.recurringSchedule?.endsAt ?? null,
        created_at: draft.createdAt,
        updated_at: draft.updatedAt
      }).slice(0, -1)},"document":${toJson(draft)}}`

    // The drafts' insert, the rows as one JSON array (see `insertEvents`), the documents inside it
    // as JSON values rather than strings escaped once more; on its own or as a `WITH` clause of
    // the statement that publishes them.
    const insertDrafts = (workspaceId: WorkspaceId, drafts: ReadonlyArray<Draft>) => sql`
      INSERT INTO drafts (workspace_id, id, status, document, recurring, ends_at, created_at, updated_at)
      SELECT ${workspaceId}, id, status, document, recurring, ends_at, created_at, updated_at
      FROM json_to_recordset(${`[${drafts.map(rowJson).join(",")}]`}::json)
           AS d(id text, status text, document json, recurring boolean, ends_at bigint, created_at bigint,
                updated_at bigint)`

    // Drafts, their events and the notification in one statement: atomic without a transaction,
    // one round trip instead of four (BEGIN, the drafts, the events, COMMIT). The channel is the
    // schema's (`EventOutbox.channelOf`).
    const insertPublishingAll = (workspaceId: WorkspaceId, entries: ReadonlyArray<NewDraft>) =>
      Effect.gen(function* () {
        const recorded = yield* recordAll(
          workspaceId,
          entries.flatMap((entry) => entry.events)
        )
        yield* sql`
          WITH drafts AS (${insertDrafts(
            workspaceId,
            entries.map((entry) => entry.draft)
          )}),
               inserted AS (${insertEvents(sql, workspaceId, recorded)})
          SELECT pg_notify(current_schema() || '_events', '') FROM (SELECT 1 FROM inserted LIMIT 1) AS written`
        return entries.map(() => undefined)
      }).pipe(Effect.orDie)

    // Concurrent creations share statements (see `GroupCommit`); inside a transaction the write
    // is the caller's, so it is made there, on the transaction's connection.
    const submit = yield* GroupCommit.make({
      key: (entry: NewDraft) => entry.workspaceId,
      write: insertPublishingAll
    })

    return DraftRepository.of({
      insert: (workspaceId, draft) => insertDrafts(workspaceId, [draft]).pipe(Effect.asVoid, Effect.orDie),
      insertPublishing: (workspaceId, draft, events) =>
        Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
          Option.isSome(transaction)
            ? Effect.asVoid(insertPublishingAll(workspaceId, [{ workspaceId, draft, events }]))
            : submit({ workspaceId, draft, events })
        ),
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
      update: (workspaceId, draft) =>
        sql`
          UPDATE drafts SET status = ${draft.status}, document = ${toJson(draft)}::json,
                 ends_at = ${draft.recurringSchedule?.endsAt ?? null}, updated_at = ${draft.updatedAt}
          WHERE workspace_id = ${workspaceId} AND id = ${draft.id}`.pipe(Effect.asVoid, Effect.orDie),
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
