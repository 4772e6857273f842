import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

// Times are epoch seconds (bigint) throughout, as on the wire (contract §1).
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE workspaces (
      id text PRIMARY KEY,
      created_at bigint NOT NULL
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id),
      key_hash text NOT NULL,
      created_at bigint NOT NULL,
      revoked_at bigint
    )`
  yield* sql`CREATE INDEX api_keys_workspace_idx ON api_keys (workspace_id)`
})
