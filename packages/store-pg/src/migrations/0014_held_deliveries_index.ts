import { migration } from "../internal/migration.js"

// The storage gauges (contract §8 "Metrics") count pending and held deliveries on every scrape.
// Pending ones are counted from their partial index (0004); held ones had none, so each scrape
// read the whole table (18 ms at 52,000 deliveries, growing with every delivery ever made). Held
// deliveries are few (a paused or disabled webhook's), so this index costs the delivery path
// nothing; it also finds a webhook's held deliveries when it is resumed.
export default migration(function* (sql) {
  yield* sql`CREATE INDEX deliveries_held_idx ON deliveries (workspace_id, webhook_id) WHERE status = 'held'`
})
