import { migration } from "../internal/migration.js"

// The ordering key an event was published with (contract §8, "Ordering by key"), beside its body:
// the key is not part of what a delivery sends.
export default migration(function* (sql) {
  yield* sql`ALTER TABLE events ADD COLUMN ordering_key text`
})
