import { migration } from "../internal/migration.js"

// A rate-limited webhook's schedule (docs/decisions/0115): `next_at` is its next attempt's slot
// (epoch ms, fractional), read and moved by claims under the row lock. A column with a constant
// default: no rewrite. `slot` and `counts` stay, and claims keep them current, because processes
// of the previous release, still running during a rolling deploy, claim by them.
export default migration(function* (sql) {
  yield* sql`ALTER TABLE webhook_flow ADD COLUMN next_at double precision NOT NULL DEFAULT 0`
})
