import type * as SqlClient from "@effect/sql/SqlClient"
import type { RecordedEvent } from "@waybill/events/EventOutbox"

/**
 * The outbox insert of recorded events, in their order, as a fragment for a `WITH` clause
 * (`… AS (${insertEvents(…)})`) that ends in `RETURNING 1`. Its text is the same for any number
 * of events (one array per column), so the statement around it is prepared once.
 */
export const insertEvents = (
  sql: SqlClient.SqlClient,
  workspaceId: string,
  recorded: ReadonlyArray<RecordedEvent>
) => sql`
  INSERT INTO events (id, workspace_id, type, created_at, body)
  SELECT id, ${workspaceId}, type, created_at, body
  FROM unnest(${recorded.map((event) => event.id)}::text[], ${recorded.map((event) => event.type)}::text[],
              ${recorded.map((event) => event.createdAt)}::bigint[], ${recorded.map((event) => event.body)}::text[])
       WITH ORDINALITY AS e(id, type, created_at, body, n)
  ORDER BY n
  RETURNING 1`
