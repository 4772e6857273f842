/** The `DraftRepository` port on PostgreSQL, creations shared by a group commit. @since 0.1.0 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as GroupCommit from "@waybill/core/GroupCommit"
import type { IdempotencyRecord } from "@waybill/core/Idempotency"
import * as TraceContext from "@waybill/core/TraceContext"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { Draft, toJson } from "@waybill/drafts/Draft"
import { DraftRepository, makePage } from "@waybill/drafts/DraftRepository"
import { countPublished, type NewEvent, recordAll } from "@waybill/events/EventOutbox"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { pageOfDocuments } from "./internal/documents.js"
import { insertEvents, insertEventsKeyed } from "./internal/eventRows.js"
import { firstPerKey, insertKeys } from "./internal/idempotencyRows.js"
import * as TimeRanges from "./internal/timeRanges.js"

const decode = Schema.decodeUnknownSync(Draft)

interface NewDraft {
  readonly workspaceId: WorkspaceId
  readonly draft: Draft
  readonly events: ReadonlyArray<NewEvent>
  readonly record?: IdempotencyRecord | undefined
}

/** The draft repository over the `SqlClient` in context. @since 0.1.0 */
export const layer: Layer.Layer<DraftRepository, never, SqlClient.SqlClient> = Layer.scoped(
  DraftRepository,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const one = (rows: ReadonlyArray<{ readonly document: unknown }>) =>
      Option.map(Option.fromNullable(rows[0]), (row) => decode(row.document))
    // The document inside is the draft's own text (`toJson`), not serialized again.
    const rowJson = (draft: Draft) =>
      `${JSON.stringify({
        id: draft.id,
        status: draft.status,
        recurring: draft.recurringSchedule !== null,
        ends_at: draft.recurringSchedule?.endsAt ?? null,
        created_at: draft.createdAt,
        updated_at: draft.updatedAt
      }).slice(0, -1)},"document":${toJson(draft)}}`

    // The rows as one JSON array (see `insertEvents`), the documents as JSON values rather than
    // strings escaped once more.
    const insertDrafts = (workspaceId: WorkspaceId, drafts: ReadonlyArray<Draft>) => sql`
      INSERT INTO drafts (workspace_id, id, status, document, recurring, ends_at, created_at, updated_at)
      SELECT ${workspaceId}, id, status, document, recurring, ends_at, created_at, updated_at
      FROM json_to_recordset(${`[${drafts.map(rowJson).join(",")}]`}::json)
           AS d(id text, status text, document json, recurring boolean, ends_at bigint, created_at bigint,
                updated_at bigint)`

    // A draft with a key only when its key went in.
    const insertDraftsKeyed = (workspaceId: WorkspaceId, entries: ReadonlyArray<NewDraft>) => sql`
      INSERT INTO drafts (workspace_id, id, status, document, recurring, ends_at, created_at, updated_at)
      SELECT ${workspaceId}, id, status, document, recurring, ends_at, created_at, updated_at
      FROM json_to_recordset(${`[${entries
        .map((entry) => `${rowJson(entry.draft).slice(0, -1)},"key":${JSON.stringify(entry.record?.key ?? null)}}`)
        .join(",")}]`}::json)
           AS d(id text, status text, document json, recurring boolean, ends_at bigint, created_at bigint,
                updated_at bigint, key text)
      WHERE d.key IS NULL OR d.key IN (SELECT key FROM keys)`

    // The kept answers first, then the drafts and events whose key went in, in one statement.
    const insertPublishingKeyed = (workspaceId: WorkspaceId, entries: ReadonlyArray<NewDraft>) =>
      Effect.gen(function* () {
        const writing = firstPerKey(entries)
        const perEntry = writing.map((entry) => ({ entry, events: entry.events }))
        const recorded = yield* recordAll(
          workspaceId,
          perEntry.flatMap((item) => item.events)
        )
        yield* TimeRanges.cover(
          sql,
          TimeRanges.events,
          recorded.map((event) => event.id)
        )
        const keys = perEntry.flatMap((item) => item.events.map(() => item.entry.record?.key ?? null))
        const [result] = yield* sql<{ readonly won: ReadonlyArray<string> }>`
          WITH keys AS (${insertKeys(
            sql,
            workspaceId,
            writing.flatMap((entry) => (entry.record === undefined ? [] : [entry.record]))
          )}),
               drafts AS (${insertDraftsKeyed(workspaceId, writing)}),
               inserted AS (${insertEventsKeyed(sql, workspaceId, recorded, keys)})
          SELECT (SELECT pg_notify(current_schema() || '_events', pg_current_xact_id()::text) FROM (SELECT 1 FROM inserted LIMIT 1) AS written) AS notified,
                 (SELECT coalesce(json_agg(key), '[]'::json) FROM keys) AS won`
        const won = new Set(result?.won ?? [])
        const written = new Set(writing)
        const answers = entries.map(
          (entry) => written.has(entry) && (entry.record === undefined || won.has(entry.record.key))
        )
        let at = 0
        yield* countPublished(
          perEntry.flatMap((item) => {
            const events = recorded.slice(at, at + item.events.length)
            at += item.events.length
            return item.entry.record === undefined || won.has(item.entry.record.key) ? events : []
          })
        )
        return answers
      }).pipe(Effect.orDie)

    // Drafts, events and notification in one statement: atomic without a transaction, one round
    // trip instead of four.
    const insertPublishingAll = (workspaceId: WorkspaceId, entries: ReadonlyArray<NewDraft>) =>
      entries.some((entry) => entry.record !== undefined)
        ? insertPublishingKeyed(workspaceId, entries)
        : insertPublishingPlain(workspaceId, entries)

    const insertPublishingPlain = (workspaceId: WorkspaceId, entries: ReadonlyArray<NewDraft>) =>
      Effect.gen(function* () {
        const recorded = yield* recordAll(
          workspaceId,
          entries.flatMap((entry) => entry.events)
        )
        yield* TimeRanges.cover(
          sql,
          TimeRanges.events,
          recorded.map((event) => event.id)
        )
        yield* sql`
          WITH drafts AS (${insertDrafts(
            workspaceId,
            entries.map((entry) => entry.draft)
          )}),
               inserted AS (${insertEvents(sql, workspaceId, recorded)})
          SELECT pg_notify(current_schema() || '_events', pg_current_xact_id()::text) FROM (SELECT 1 FROM inserted LIMIT 1) AS written`
        yield* countPublished(recorded)
        return entries.map(() => true)
      }).pipe(Effect.orDie)

    // Concurrent creations share statements (`GroupCommit`); inside a transaction the write is
    // the caller's, made on its connection.
    const submit = yield* GroupCommit.make({
      key: (entry: NewDraft) => entry.workspaceId,
      write: insertPublishingAll
    })

    // The shared write runs in the group commit's fiber: the request's trace goes with its events.
    const traced = (events: ReadonlyArray<NewEvent>) =>
      Effect.map(TraceContext.current, (traceparent) =>
        events.map((event) => (event.traceparent === undefined ? { ...event, traceparent } : event))
      )

    return DraftRepository.of({
      insert: (workspaceId, draft) => insertDrafts(workspaceId, [draft]).pipe(Effect.asVoid, Effect.orDie),
      insertPublishing: (workspaceId, draft, events) =>
        Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
          Option.isSome(transaction)
            ? Effect.asVoid(insertPublishingAll(workspaceId, [{ workspaceId, draft, events }]))
            : Effect.asVoid(Effect.flatMap(traced(events), (events) => submit({ workspaceId, draft, events })))
        ),
      insertPublishingIdempotent: (workspaceId, draft, events, record) =>
        Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
          Option.isSome(transaction)
            ? Effect.map(
                insertPublishingAll(workspaceId, [{ workspaceId, draft, events, record }]),
                ([written]) => written!
              )
            : Effect.flatMap(traced(events), (events) => submit({ workspaceId, draft, events, record }))
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
          LIMIT ${query.limit + 1}`.pipe(Effect.map(pageOfDocuments(decode, makePage, query.limit)), Effect.orDie)
    })
  })
)
