/**
 * Executors for publishing an event inside your own transaction (contract §9), for the query
 * builders that do not take node-postgres' `query(text, values)` as it is. A pg `Client` or
 * `PoolClient` needs none. Each runs Waybill's one statement, with `$1`-style placeholders, on the
 * transaction it is given; make one inside the transaction and use it there.
 * @since 0.2.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Executor } from "@waybill/store-pg/HostTransaction"
import { sql as drizzleSql, type SQL } from "drizzle-orm"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import type { Knex } from "knex"
import { CompiledQuery } from "kysely"

/** A Kysely transaction (`db.transaction().execute(async (trx) => …)`): its own placeholders are `$n`. @since 0.2.0 */
export const kyselyExecutor = (trx: { executeQuery: (query: CompiledQuery) => Promise<unknown> }): Executor => ({
  query: (text, values) => trx.executeQuery(CompiledQuery.raw(text, values))
})

/** A Drizzle transaction on node-postgres (`db.transaction(async (tx) => …)`): each `$n` a parameter. @since 0.2.0 */
export const drizzleExecutor = (tx: { execute: (query: SQL) => PromiseLike<unknown> }): Executor => ({
  query: (text, values) =>
    tx.execute(
      drizzleSql.join(
        text
          .split(/\$(\d+)/)
          .map((part, i) => (i % 2 === 0 ? drizzleSql.raw(part) : drizzleSql.param(values[Number(part) - 1])))
      )
    )
})

/** A Knex transaction (`knex.transaction(async (trx) => …)`): Knex binds `?` in order. @since 0.2.0 */
export const knexExecutor = (trx: Knex): Executor => ({
  query: (text, values) =>
    trx.raw(
      text.replace(/\$\d+/g, "?"),
      Array.from(text.matchAll(/\$(\d+)/g), (match) => values[Number(match[1]) - 1]) as Array<Knex.Value>
    )
})

/**
 * An `@effect/sql` client, for Waybill's Promise API: made inside `sql.withTransaction`, it runs the
 * statement with that fiber's context, so in that transaction (`Effect.runPromise(sql.unsafe(…))`
 * would run outside it, on another connection). In Effect code, `HostTransaction.publishInWith(sql, …)`.
 * @since 0.2.0
 */
export const effectSqlExecutor: Effect.Effect<Executor, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const runPromise = Runtime.runPromise(yield* Effect.runtime<never>())
  return { query: (text, values) => runPromise(sql.unsafe(text, values)) }
})
