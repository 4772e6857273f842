/** How a migration is written: its statements, in order, over the migrator's client. */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { YieldWrap } from "effect/Utils"

/** A migration that runs the statements `statements` yields, one after the other. */
export const migration = (
  statements: (sql: SqlClient.SqlClient) => Generator<YieldWrap<Effect.Effect<unknown, SqlError>>, void, never>
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.gen(() => statements(sql)))
