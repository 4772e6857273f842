/**
 * Test support: a fresh, throw-away database per suite on either back end.
 *
 * @since 0.1.0
 */

import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Database from "./Database.js"

/**
 * Creates a database with a random name on the server of `url` and yields its URL; drops it
 * when the scope closes.
 *
 * @since 0.1.0
 * @category testing
 */
export const freshPostgresDatabase = (url: string) =>
  Effect.gen(function* () {
    const name = `waybill_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    const admin = PgClient.make({ url: Redacted.make(url), maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer))
    yield* Effect.acquireRelease(Effect.scoped(Effect.flatMap(admin, (sql) => sql`CREATE DATABASE ${sql(name)}`)), () =>
      Effect.scoped(Effect.flatMap(admin, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`)).pipe(
        Effect.ignoreLogged
      )
    )
    const fresh = new URL(url)
    fresh.pathname = `/${name}`
    return fresh.toString()
  })

/**
 * The back ends a storage suite runs on: embedded PGlite in memory always, and PostgreSQL
 * (a fresh database on the server of `DATABASE_URL`) when that variable is set.
 *
 * @since 0.1.0
 * @category testing
 */
export const backends = (env: Record<string, string | undefined> = process.env) => {
  const url = env.DATABASE_URL
  return [
    { name: "pglite", config: Effect.succeed<Database.DatabaseConfig>({ _tag: "Embedded", dataDir: "memory://" }) },
    ...(url === undefined || url === ""
      ? []
      : [
          {
            name: "postgres",
            config: Effect.map(
              freshPostgresDatabase(url),
              (fresh): Database.DatabaseConfig => ({
                _tag: "Postgres",
                url: Redacted.make(fresh),
                maxConnections: 5
              })
            )
          }
        ])
  ]
}

/**
 * A database layer for one back end, dropped when the layer is released.
 *
 * @since 0.1.0
 * @category testing
 */
export const layer = (backend: ReturnType<typeof backends>[number]) =>
  Layer.unwrapScoped(Effect.map(backend.config, Database.layer))
