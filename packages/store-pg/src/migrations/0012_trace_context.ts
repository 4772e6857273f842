import { migration } from "../internal/migration.js"

// Tracing (contract §8): each event keeps the W3C `traceparent` of the request that raised it, so
// every attempt of its deliveries, in any process and after a restart, continues that trace.
// Events recorded before have none (`NULL`): their attempts start a trace of their own.
export default migration(function* (sql) {
  yield* sql`ALTER TABLE events ADD COLUMN traceparent text`
})
