import { migration } from "../internal/migration.js"

// Drafts keep their document as `json`, not `jsonb`, so the transport keeps its key order and
// form as sent. Events are the outbox, their delivery body fixed as text, in order by `seq`
// (ids sort by millisecond only).
export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE drafts (
      workspace_id text NOT NULL,
      id text NOT NULL,
      status text NOT NULL,
      document json NOT NULL,
      recurring boolean NOT NULL,
      ends_at bigint,
      generated_until bigint,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      PRIMARY KEY (workspace_id, id)
    )`
  yield* sql`CREATE INDEX drafts_status_idx ON drafts (workspace_id, status, id)`
  yield* sql`
    CREATE INDEX drafts_running_masters_idx ON drafts (status, ends_at)
    WHERE status IN ('active-recurring', 'paused-recurring')`
  yield* sql`
    CREATE TABLE events (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      id text NOT NULL UNIQUE,
      workspace_id text NOT NULL,
      type text NOT NULL,
      created_at bigint NOT NULL,
      body text NOT NULL,
      fanned_out_at bigint
    )`
  yield* sql`CREATE INDEX events_pending_idx ON events (seq) WHERE fanned_out_at IS NULL`
  yield* sql`CREATE INDEX events_workspace_idx ON events (workspace_id, seq)`
})
