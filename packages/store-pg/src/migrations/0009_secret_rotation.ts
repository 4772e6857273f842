import { migration } from "../internal/migration.js"

// The end of a previous secret's overlap, copied from the document so the sweep finds expired
// ones by index rather than by reading every document.
export default migration(function* (sql) {
  yield* sql`ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at bigint`
  yield* sql`
    CREATE INDEX webhooks_previous_secret_idx ON webhooks (previous_secret_expires_at)
    WHERE previous_secret_expires_at IS NOT NULL`
})
