/**
 * The `EventOutbox` port of `@waybill/events` on PostgreSQL: events are rows of the `events`
 * table, written in one statement, so in the caller's transaction when there is one (run `publish`
 * inside `Transactor.withTransaction` together with the change that raised them) and atomic on
 * its own otherwise; their delivery body fixed as text.
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { countPublished, EventOutbox, type RecordedEvent, recordAll } from "@waybill/events/EventOutbox"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { sqlLayer } from "./internal/adapter.js"
import { insertEvents, insertEventsKeyed } from "./internal/eventRows.js"
import { firstPerKey, insertKeys } from "./internal/idempotencyRows.js"
import { defaultSchema } from "./Migrations.js"

/**
 * The channel `pg_notify` signals after events are written in Waybill's schema `schema`, so
 * dispatchers wake up early: `<schema>_events`. Notification channels belong to the whole
 * database, so each schema has its own (the statements name it by `current_schema()`). The
 * payload is the writing transaction's id (`PgOutboxReader.ReadHorizon` reads it).
 * @since 0.1.0
 */
export const channelOf = (schema: string): string => `${schema}_events`

/**
 * The channel of the default schema (`waybill_events`).
 * @since 0.1.0
 */
export const channel = channelOf(defaultSchema)

/**
 * @since 0.1.0
 */
export const layer: Layer.Layer<EventOutbox, never, SqlClient.SqlClient> = sqlLayer(EventOutbox, (sql) => ({
  publish: (workspaceId, events) =>
    Effect.gen(function* () {
      if (events.length === 0) return []
      const recorded = yield* recordAll(workspaceId, events)
      // One statement (atomic without a transaction of its own): the rows, and a notification
      // that PostgreSQL delivers on commit only; harmless where nobody listens. Its text is
      // the same for any number of events (the rows are one JSON array), so it is prepared once.
      yield* sql`
            WITH inserted AS (${insertEvents(sql, workspaceId, recorded)})
            SELECT pg_notify(current_schema() || '_events', pg_current_xact_id()::text) FROM (SELECT 1 FROM inserted LIMIT 1) AS written`
      yield* countPublished(recorded)
      return recorded
    }).pipe(Effect.orDie),
  // Still one statement: the kept answers first (`keys`), then the events, an event with a
  // record only when its key went in; the keys that did come back with the notification.
  publishIdempotent: (workspaceId, entries) =>
    Effect.gen(function* () {
      const writing = firstPerKey(entries)
      const recorded = yield* recordAll(
        workspaceId,
        writing.map((entry) => entry.event)
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
