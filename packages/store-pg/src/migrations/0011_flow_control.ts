import { migration } from "../internal/migration.js"

// Flow control (contract §8). A webhook's status, why and since when it is disabled, its rate
// limit and ordering live in columns beside its document: claims read them in SQL, and automatic
// disabling changes them in the statement that counts the failures in a row (`failure_streak`).
// Claims of plain webhooks (enabled, no limit, no ordering) stay as they were; the others are
// claimed under their row in `webhook_flow`, locked by the claiming transaction, which holds the
// attempts started per 50 ms slot over the last second or so (`slot`: the newest slot's number,
// `counts`: newest first) for the rate limit, and serialises FIFO claims across processes.
export default migration(function* (sql) {
  yield* sql`
    ALTER TABLE webhooks
      ADD COLUMN status text NOT NULL DEFAULT 'enabled',
      ADD COLUMN disabled_reason text,
      ADD COLUMN disabled_at bigint,
      ADD COLUMN rate_limit_per_second integer,
      ADD COLUMN ordering text NOT NULL DEFAULT 'none',
      ADD COLUMN failure_streak integer NOT NULL DEFAULT 0`
  yield* sql`
    CREATE INDEX webhooks_flow_idx ON webhooks (id)
    WHERE status = 'enabled' AND (rate_limit_per_second IS NOT NULL OR ordering <> 'none')`
  yield* sql`
    CREATE TABLE webhook_flow (
      webhook_id text PRIMARY KEY,
      slot bigint NOT NULL DEFAULT 0,
      counts integer[] NOT NULL DEFAULT '{}'
    )`
})
