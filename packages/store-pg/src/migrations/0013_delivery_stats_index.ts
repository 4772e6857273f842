import { migration } from "../internal/migration.js"

// Latency (ms from the event's recording to the ending response), and a covering index per
// webhook by event time, so statistics read the index alone (docs/decisions/0084; measured at
// scale by bench/at-scale.ts). Lease updates do not touch these columns, so they stay HOT (0005).
export default migration(function* (sql) {
  yield* sql`ALTER TABLE deliveries ADD COLUMN latency_ms integer`
  yield* sql`CREATE INDEX deliveries_stats_idx ON deliveries (webhook_id, event_created_at) INCLUDE (workspace_id, status, latency_ms)`
})
