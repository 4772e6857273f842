import { migration } from "../internal/migration.js"

// Flow control in columns, so claims and automatic disabling work in SQL. A flow-controlled
// webhook is claimed under its locked `webhook_flow` row: attempts per 50 ms slot (`slot`: the
// newest slot's number, `counts`: newest first) for the rate limit, and FIFO claims in turn.
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
