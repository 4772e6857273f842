import type * as SqlClient from "@effect/sql/SqlClient"
import type { RecordedEvent } from "@waybill/events/EventOutbox"

/**
 * The outbox insert of recorded events, as a `WITH` clause. The rows travel as one JSON array:
 * one text for any number of events (prepared once), escaped natively by `JSON.stringify`.
 */
export const insertEvents = (
  sql: SqlClient.SqlClient,
  workspaceId: string,
  recorded: ReadonlyArray<RecordedEvent>
) => sql`
  INSERT INTO events (id, workspace_id, type, created_at, body, traceparent, ordering_key)
  SELECT id, ${workspaceId}, type, created_at, body, traceparent, ordering_key
  FROM ROWS FROM (json_to_recordset(${JSON.stringify(
    recorded.map((event) => ({
      id: event.id,
      type: event.type,
      created_at: event.createdAt,
      body: event.body,
      traceparent: event.traceparent,
      ordering_key: event.orderingKey
    }))
  )}::json) AS (id text, type text, created_at bigint, body text, traceparent text, ordering_key text))
       WITH ORDINALITY AS e(id, type, created_at, body, traceparent, ordering_key, n)
  ORDER BY n
  RETURNING 1`

/**
 * `insertEvents` beside `insertKeys` (a `WITH` clause named `keys`): an event with a key is
 * inserted only if its key went in; `keys[i]` belongs to `recorded[i]`.
 */
export const insertEventsKeyed = (
  sql: SqlClient.SqlClient,
  workspaceId: string,
  recorded: ReadonlyArray<RecordedEvent>,
  keys: ReadonlyArray<string | null>
) => sql`
  INSERT INTO events (id, workspace_id, type, created_at, body, traceparent, ordering_key)
  SELECT id, ${workspaceId}, type, created_at, body, traceparent, ordering_key
  FROM ROWS FROM (json_to_recordset(${JSON.stringify(
    recorded.map((event, i) => ({
      id: event.id,
      type: event.type,
      created_at: event.createdAt,
      body: event.body,
      traceparent: event.traceparent,
      ordering_key: event.orderingKey,
      key: keys[i] ?? null
    }))
  )}::json) AS (id text, type text, created_at bigint, body text, traceparent text, ordering_key text, key text))
       WITH ORDINALITY AS e(id, type, created_at, body, traceparent, ordering_key, key, n)
  WHERE e.key IS NULL OR e.key IN (SELECT key FROM keys)
  ORDER BY n
  RETURNING 1`
