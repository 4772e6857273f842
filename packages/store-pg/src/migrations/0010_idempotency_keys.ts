import { migration } from "../internal/migration.js"

// The primary key makes two processes racing with one key create once: the second insert waits
// for the first to commit, then inserts nothing.
export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE idempotency_keys (
      workspace_id text NOT NULL,
      key text NOT NULL,
      operation text NOT NULL,
      fingerprint text NOT NULL,
      status integer NOT NULL,
      body text NOT NULL,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL,
      PRIMARY KEY (workspace_id, key)
    )`
  yield* sql`CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at)`
})
