import { migration } from "../internal/migration.js"

// Console tokens (contract §5), stored as their SHA-256 hash like API keys. A new, empty table:
// nothing is rewritten, so it costs the same at any size of the others.
export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE console_tokens (
      id text PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id),
      token_hash text NOT NULL,
      scope text NOT NULL CHECK (scope IN ('read', 'manage')),
      label text,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL,
      revoked_at bigint
    )`
  yield* sql`CREATE INDEX console_tokens_workspace_idx ON console_tokens (workspace_id, expires_at)`
})
