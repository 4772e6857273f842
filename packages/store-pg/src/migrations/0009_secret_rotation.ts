import { migration } from "../internal/migration.js"

// Secret rotation (contract §8): an HMAC webhook rotated with an overlap keeps its previous
// secret (sealed, in the document's `auth.previous`) until the overlap ends; the column copies
// its end, so the sweep that deletes expired previous secrets finds them by index rather than by
// reading every document.
export default migration(function* (sql) {
  yield* sql`ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at bigint`
  yield* sql`
    CREATE INDEX webhooks_previous_secret_idx ON webhooks (previous_secret_expires_at)
    WHERE previous_secret_expires_at IS NOT NULL`
})
