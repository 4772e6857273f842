import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

// Webhooks can be edited (the operator console): each edit raises `revision`, which claims
// return beside a delivery so that every process can tell a cached target from a stale one.
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhooks ADD COLUMN revision integer NOT NULL DEFAULT 1`
})
