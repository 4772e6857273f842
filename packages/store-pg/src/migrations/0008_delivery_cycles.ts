import { migration } from "../internal/migration.js"

// Resend and replay start a fresh attempt cycle: `cycle_start` counts the attempts before it.
// A replay selects ended deliveries by event time, hence `event_created_at` and the partial index.
// No column here changes on a claim, so claims stay HOT (0005).
export default migration(function* (sql) {
  yield* sql`
    ALTER TABLE deliveries
      ADD COLUMN event_created_at bigint,
      ADD COLUMN cycle_start integer NOT NULL DEFAULT 0,
      ADD COLUMN cycle_trigger text NOT NULL DEFAULT 'automatic'`
  yield* sql`UPDATE deliveries d SET event_created_at = e.created_at FROM events e WHERE e.id = d.event_id`
  yield* sql`ALTER TABLE deliveries ALTER COLUMN event_created_at SET NOT NULL`
  yield* sql`
    CREATE INDEX deliveries_replay_idx ON deliveries (webhook_id, event_created_at, seq) WHERE status <> 'pending'`
})
