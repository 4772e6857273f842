/**
 * The shape of most PostgreSQL adapters: a port implemented over the `SqlClient` in context,
 * built once per layer.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The layer of the port `tag` whose implementation `make` builds from the `SqlClient` (called
 * once, when the layer is built, so any state it sets up is the layer's own).
 */
export const sqlLayer = <I, S>(
  tag: Context.Tag<I, S>,
  make: (sql: SqlClient.SqlClient) => NoInfer<S>
): Layer.Layer<I, never, SqlClient.SqlClient> => Layer.effect(tag, Effect.map(SqlClient.SqlClient, make))
