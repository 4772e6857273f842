import { migration } from "../internal/migration.js"

// Webhooks can be edited (the operator console): each edit raises `revision`, which claims
// return beside a delivery so that every process can tell a cached target from a stale one.
export default migration(function* (sql) {
  yield* sql`ALTER TABLE webhooks ADD COLUMN revision integer NOT NULL DEFAULT 1`
})
