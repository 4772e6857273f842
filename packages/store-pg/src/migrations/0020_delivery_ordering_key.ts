import { migration } from "../internal/migration.js"

// Ordering by key (contract §8; docs/decisions/0126): each delivery keeps its event's ordering
// key. A nullable column without a default: the catalogue alone changes, nothing is rewritten. A
// keyed webhook's claim reads its pending deliveries from `deliveries_pending_idx` and sorts them
// by key, so no index of its own is built here (which would lock writes on every range).
export default migration(function* (sql) {
  yield* sql`ALTER TABLE deliveries ADD COLUMN ordering_key text`
})
