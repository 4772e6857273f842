import { migration } from "../internal/migration.js"

// The storage gauges count held deliveries on every scrape, which without it read the whole table.
// Held deliveries are few, so it costs the delivery path nothing.
export default migration(function* (sql) {
  yield* sql`CREATE INDEX deliveries_held_idx ON deliveries (workspace_id, webhook_id) WHERE status = 'held'`
})
