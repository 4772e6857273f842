import { migration } from "../internal/migration.js"

// Fan-out no longer marks each event: it reads events in order behind one stored position,
// held by one dispatcher at a time under a lease, and moves the position in the transaction that
// records their deliveries. The order is the writing transaction's id (`xid`), then `seq`;
// fan-out reads only events older than every open transaction, so a transaction that commits
// late can never leave an event behind the position.
//
// Events fanned out before this migration sort before the position (xid 0); the ones still
// pending get this transaction's id, after it, and keep their `seq` order.
//
// Also dropped, as nothing reads them and every event or delivery paid for them: the index on
// events by workspace, and the foreign key from deliveries to events (deliveries are only ever
// made from events read from the table, and events are never deleted).
export default migration(function* (sql) {
  yield* sql`ALTER TABLE events ADD COLUMN xid xid8`
  yield* sql`UPDATE events SET xid = CASE WHEN fanned_out_at IS NULL THEN pg_current_xact_id() ELSE '0'::xid8 END`
  yield* sql`ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id(), ALTER COLUMN xid SET NOT NULL`
  yield* sql`DROP INDEX events_pending_idx`
  yield* sql`DROP INDEX events_workspace_idx`
  yield* sql`ALTER TABLE events DROP COLUMN fanned_out_at`
  yield* sql`CREATE INDEX events_fan_out_idx ON events (xid, seq)`
  yield* sql`ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_fkey`
  yield* sql`
    CREATE TABLE fan_out (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      xid xid8 NOT NULL,
      seq bigint NOT NULL,
      owner text,
      lease_until bigint NOT NULL DEFAULT 0
    )`
  yield* sql`INSERT INTO fan_out (xid, seq) VALUES ('0', 9223372036854775807)`
})
