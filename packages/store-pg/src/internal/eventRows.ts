import type * as SqlClient from "@effect/sql/SqlClient"
import type { RecordedEvent } from "@waybill/events/EventOutbox"

/**
 * The outbox insert of recorded events, in their order, as a fragment for a `WITH` clause
 * (`… AS (${insertEvents(…)})`) that ends in `RETURNING 1`. The rows travel as one JSON array:
 * its text is the same for any number of events (prepared once), and `JSON.stringify` escapes
 * the bodies natively, where a `text[]` parameter is escaped element by element in JavaScript.
 */
export const insertEvents = (
  sql: SqlClient.SqlClient,
  workspaceId: string,
  recorded: ReadonlyArray<RecordedEvent>
) => sql`
  INSERT INTO events (id, workspace_id, type, created_at, body, traceparent)
  SELECT id, ${workspaceId}, type, created_at, body, traceparent
  FROM ROWS FROM (json_to_recordset(${JSON.stringify(
    recorded.map((event) => ({
      id: event.id,
      type: event.type,
      created_at: event.createdAt,
      body: event.body,
      traceparent: event.traceparent
    }))
  )}::json) AS (id text, type text, created_at bigint, body text, traceparent text))
       WITH ORDINALITY AS e(id, type, created_at, body, traceparent, n)
  ORDER BY n
  RETURNING 1`

/**
 * `insertEvents` for a statement that also keeps idempotency answers (a `WITH` clause named
 * `keys`, `idempotencyRows.insertKeys`): an event whose `key` is set is inserted only if its key
 * is among those `keys` inserted; `keys[i]` belongs to `recorded[i]`.
 */
export const insertEventsKeyed = (
  sql: SqlClient.SqlClient,
  workspaceId: string,
  recorded: ReadonlyArray<RecordedEvent>,
  keys: ReadonlyArray<string | null>
) => sql`
  INSERT INTO events (id, workspace_id, type, created_at, body, traceparent)
  SELECT id, ${workspaceId}, type, created_at, body, traceparent
  FROM ROWS FROM (json_to_recordset(${JSON.stringify(
    recorded.map((event, i) => ({
      id: event.id,
      type: event.type,
      created_at: event.createdAt,
      body: event.body,
      traceparent: event.traceparent,
      key: keys[i] ?? null
    }))
  )}::json) AS (id text, type text, created_at bigint, body text, traceparent text, key text))
       WITH ORDINALITY AS e(id, type, created_at, body, traceparent, key, n)
  WHERE e.key IS NULL OR e.key IN (SELECT key FROM keys)
  ORDER BY n
  RETURNING 1`
