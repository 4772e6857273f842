import { migration } from "../internal/migration.js"

// The `traceparent` of the request that raised an event, so every attempt of its deliveries, in
// any process, continues that trace.
export default migration(function* (sql) {
  yield* sql`ALTER TABLE events ADD COLUMN traceparent text`
})
