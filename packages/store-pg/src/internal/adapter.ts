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
