import { migration } from "../internal/migration.js"

// Times are epoch seconds (bigint) throughout, as on the wire.
export default migration(function* (sql) {
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
