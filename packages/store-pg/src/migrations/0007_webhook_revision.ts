import { migration } from "../internal/migration.js"

// Each edit raises `revision`, which claims return, so every process can tell a stale cached target.
export default migration(function* (sql) {
  yield* sql`ALTER TABLE webhooks ADD COLUMN revision integer NOT NULL DEFAULT 1`
})
