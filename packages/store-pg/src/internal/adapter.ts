/** The shape of most PostgreSQL adapters: a port over the `SqlClient` in context. */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The layer of the port `tag` that `make` builds once from the `SqlClient`, with its own state. */
export const sqlLayer = <I, S>(
  tag: Context.Tag<I, S>,
  make: (sql: SqlClient.SqlClient) => NoInfer<S>
): Layer.Layer<I, never, SqlClient.SqlClient> => Layer.effect(tag, Effect.map(SqlClient.SqlClient, make))

/**
 * Runs `insert` in one transaction after making sure the workspace has its row (`workspaces`,
 * which credentials reference): the first key or token of a workspace creates it.
 */
export const insertInWorkspace = (
  sql: SqlClient.SqlClient,
  workspace: { readonly workspaceId: string; readonly createdAt: number },
  insert: Effect.Effect<unknown, unknown>
): Effect.Effect<void> =>
  sql
    .withTransaction(
      Effect.zipRight(
        sql`
          INSERT INTO workspaces (id, created_at) VALUES (${workspace.workspaceId}, ${workspace.createdAt})
          ON CONFLICT (id) DO NOTHING`,
        insert
      )
    )
    .pipe(Effect.asVoid, Effect.orDie)
