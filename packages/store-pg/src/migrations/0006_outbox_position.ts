import { migration } from "../internal/migration.js"

// Fan-out reads events in (`xid`, `seq`) order behind one leased position, only below every open
// transaction, so a late commit never leaves an event behind it. Events fanned out already sort
// first (xid 0). The workspace index and the deliveries' foreign key went: nothing read them.
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
