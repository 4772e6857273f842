import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

// Tracing (contract §8): each event keeps the W3C `traceparent` of the request that raised it, so
// every attempt of its deliveries, in any process and after a restart, continues that trace.
// Events recorded before have none (`NULL`): their attempts start a trace of their own.
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE events ADD COLUMN traceparent text`
})
