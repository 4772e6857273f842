import { migration } from "../internal/migration.js"

// Deliveries reference their event's fixed body (never copied, never re-serialised); attempts
// are appended as jsonb.
export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE webhooks (
      workspace_id text NOT NULL,
      id text NOT NULL,
      events text[] NOT NULL,
      document json NOT NULL,
      created_at bigint NOT NULL,
      PRIMARY KEY (workspace_id, id)
    )`
  yield* sql`CREATE INDEX webhooks_events_idx ON webhooks USING gin (events)`
  yield* sql`
    CREATE TABLE deliveries (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id text NOT NULL,
      webhook_id text NOT NULL,
      event_id text NOT NULL REFERENCES events (id),
      event_type text NOT NULL,
      created_at bigint NOT NULL,
      status text NOT NULL,
      due_at bigint NOT NULL,
      attempts jsonb NOT NULL DEFAULT '[]',
      lease_until bigint,
      lease_token text
    )`
  yield* sql`CREATE INDEX deliveries_pending_idx ON deliveries (webhook_id, due_at, seq) WHERE status = 'pending'`
  yield* sql`CREATE INDEX deliveries_log_idx ON deliveries (workspace_id, webhook_id, id)`
  yield* sql`
    CREATE TABLE alerts (
      id text PRIMARY KEY,
      workspace_id text NOT NULL,
      webhook_id text NOT NULL,
      delivery_id text NOT NULL,
      event_id text NOT NULL,
      event_type text NOT NULL,
      reason text NOT NULL,
      created_at bigint NOT NULL
    )`
  yield* sql`CREATE INDEX alerts_workspace_idx ON alerts (workspace_id, id)`
})
