import { migration } from "../internal/migration.js"

// Resend and replay (contract §5): a delivery can start a fresh attempt cycle after it ended.
// `cycle_start` is how many attempts came before its current cycle (its retry is counted from
// there) and `cycle_trigger` what started that cycle (`automatic`: fan-out; `manual`: a resend or
// replay). A replay selects by the event's creation time in event order, so the delivery keeps
// it (`event_created_at`, filled from the events for rows made before) beside `seq`, with an
// index per webhook over the deliveries that have ended (only those are replayed: putting one
// back to pending adds no entry to it). None of these columns changes on a claim, so claims
// stay HOT (0005).
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
