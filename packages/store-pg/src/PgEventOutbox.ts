/**
 * The `EventOutbox` port on PostgreSQL: events are rows of `events`, written in one statement, so
 * in the caller's transaction when there is one and atomic on their own otherwise.
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { countPublished, EventOutbox, type RecordedEvent, recordAll } from "@waybill/events/EventOutbox"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { sqlLayer } from "./internal/adapter.js"
import { insertEvents, insertEventsKeyed } from "./internal/eventRows.js"
import { firstPerKey, insertKeys } from "./internal/idempotencyRows.js"
import * as TimeRanges from "./internal/timeRanges.js"
import { defaultSchema } from "./Migrations.js"

/**
 * The channel notified on commit of events written in `schema`, `<schema>_events` (channels belong
 * to the whole database); the payload is the writing transaction's id.
 * @since 0.1.0
 */
export const channelOf = (schema: string): string => `${schema}_events`

/** The channel of the default schema (`waybill_events`). @since 0.1.0 */
export const channel = channelOf(defaultSchema)

/** The outbox over the `SqlClient` in context. @since 0.1.0 */
export const layer: Layer.Layer<EventOutbox, never, SqlClient.SqlClient> = sqlLayer(EventOutbox, (sql) => ({
  publish: (workspaceId, events) =>
    Effect.gen(function* () {
      if (events.length === 0) return []
      const recorded = yield* recordAll(workspaceId, events)
      yield* TimeRanges.cover(
        sql,
        TimeRanges.events,
        recorded.map((event) => event.id)
      )
      // The rows and the notification in one statement; its text is the same for any number of
      // events (the rows are one JSON array), so it is prepared once.
      yield* sql`
            WITH inserted AS (${insertEvents(sql, workspaceId, recorded)})
            SELECT pg_notify(current_schema() || '_events', pg_current_xact_id()::text) FROM (SELECT 1 FROM inserted LIMIT 1) AS written`
      yield* countPublished(recorded)
      return recorded
    }).pipe(Effect.orDie),
  // Still one statement: the kept answers first, then the events, one with a record only when
  // its key went in.
  publishIdempotent: (workspaceId, entries) =>
    Effect.gen(function* () {
      const writing = firstPerKey(entries)
      const recorded = yield* recordAll(
        workspaceId,
        writing.map((entry) => entry.event)
      )
      yield* TimeRanges.cover(
        sql,
        TimeRanges.events,
        recorded.map((event) => event.id)
      )
      const records = writing.flatMap((entry) => (entry.record === undefined ? [] : [entry.record]))
      const [result] = yield* sql<{ readonly won: ReadonlyArray<string> }>`
            WITH keys AS (${insertKeys(sql, workspaceId, records)}),
                 inserted AS (${insertEventsKeyed(
                   sql,
                   workspaceId,
                   recorded,
                   writing.map((entry) => entry.record?.key ?? null)
                 )})
            SELECT (SELECT pg_notify(current_schema() || '_events', pg_current_xact_id()::text) FROM (SELECT 1 FROM inserted LIMIT 1) AS written) AS notified,
                   (SELECT coalesce(json_agg(key), '[]'::json) FROM keys) AS won`
      const won = new Set(result?.won ?? [])
      const byEntry = new Map<unknown, RecordedEvent>(writing.map((entry, i) => [entry, recorded[i]!]))
      const answers = entries.map((entry) => {
        const event = byEntry.get(entry)
        return event !== undefined && (entry.record === undefined || won.has(entry.record.key)) ? event : undefined
      })
      yield* countPublished([...new Set(answers)])
      return answers
    }).pipe(Effect.orDie)
}))
