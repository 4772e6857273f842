import { migration } from "../internal/migration.js"

// The unique key on (draft_id, trigger_at) makes generation idempotent: a restart or two
// generators at once insert a tour once, whatever the cursor says. Draft ids are unique across
// workspaces, so the key needs no workspace.
export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE tours (
      workspace_id text NOT NULL,
      id text NOT NULL,
      draft_id text NOT NULL,
      trigger_at bigint NOT NULL,
      created_at bigint NOT NULL,
      document json NOT NULL,
      PRIMARY KEY (workspace_id, id),
      CONSTRAINT tours_draft_trigger_key UNIQUE (draft_id, trigger_at)
    )`
  yield* sql`CREATE INDEX tours_draft_idx ON tours (workspace_id, draft_id, trigger_at, id)`
  yield* sql`CREATE INDEX tours_workspace_idx ON tours (workspace_id, trigger_at, id)`
})
