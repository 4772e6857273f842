import { migration } from "../internal/migration.js"

// Idempotent requests (contract §8): the answer kept per workspace and key, written in the same
// statement or transaction as what the request created. The primary key is what makes two
// processes racing with one key create once: the second insert waits for the first to commit
// and then inserts nothing. The sweep deletes by `expires_at`, in bounded steps.
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
