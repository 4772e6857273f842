/** Test support: a fresh, throw-away database per suite on either back end. @since 0.1.0 */

import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { PGlite } from "@electric-sql/pglite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Database from "./Database.js"
import { rollHours } from "./internal/deliveryHours.js"
import * as Embedded from "./internal/embedded.js"
import * as Migrations from "./Migrations.js"

/**
 * Creates a database with a random name on the server of `url` and yields its URL; drops it
 * when the scope closes.
 * @since 0.1.0
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
 * `freshPostgresDatabase` with Waybill's schema migrated into `schema` (`waybill` by default), as
 * a Waybill process starting on it would leave it: for tests of a host's own connection to it.
 * @since 0.2.0
 */
export const migratedPostgresDatabase = (url: string, schema: string = Migrations.defaultSchema) =>
  Effect.gen(function* () {
    const fresh = yield* freshPostgresDatabase(url)
    yield* Effect.scoped(
      Effect.flatMap(PgClient.make({ url: Redacted.make(fresh), maxConnections: 1 }), (sql) =>
        Migrations.runIn(schema).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      )
    ).pipe(Effect.provide(Reactivity.layer))
    return fresh
  })

/**
 * The variable naming a migrated PGlite snapshot (`writeSnapshot`) that `backends` starts each
 * PGlite database from, made once per test run instead of a migration per suite.
 * @since 0.1.0
 */
export const snapshotVariable = "WAYBILL_TEST_PGLITE_SNAPSHOT"

/**
 * Writes to `file` a PGlite data directory with every migration applied, for `DatabaseConfig.snapshot`.
 * @since 0.1.0
 */
export const writeSnapshot = (file: string): Effect.Effect<void, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const embedded = yield* Embedded.acquire("memory://", { searchPath: Migrations.defaultSchema })
      const sql = yield* PgClient.make({
        host: embedded.socketDir,
        port: Embedded.SOCKET_PORT,
        username: "postgres",
        database: "postgres",
        maxConnections: 1
      }).pipe(Effect.provide(Reactivity.layer))
      yield* Migrations.run.pipe(Effect.provideService(SqlClient.SqlClient, sql))
      const dump = yield* Effect.promise(() => embedded.db.dumpDataDir("none"))
      yield* Effect.promise(async () => writeFile(file, Buffer.from(await dump.arrayBuffer())))
    })
  )

/**
 * The variable naming a migrated PGlite data directory (`writeDataDir`) that `makeDataDir` copies,
 * sparing each server or command PGlite's initdb and the migrations.
 * @since 0.1.0
 */
export const dataDirVariable = "WAYBILL_TEST_PGLITE_DATA_DIR"

/** Writes at `directory` (a path that does not exist yet) the PGlite data directory of a snapshot. @since 0.1.0 */
export const writeDataDir = (file: string, directory: string): Effect.Effect<void, unknown> =>
  Effect.promise(async () => {
    await mkdir(dirname(directory), { recursive: true })
    const db = new PGlite(directory, { loadDataDir: new Blob([await readFile(file)]) })
    await db.waitReady
    await db.close()
  })

/**
 * A new temporary `WAYBILL_DATA_DIR` whose `pglite` folder copies the directory `dataDirVariable`
 * names (empty when it is unset). The caller removes it.
 * @since 0.1.0
 */
export const makeDataDir = async (prefix: string, env: Record<string, string | undefined> = process.env) => {
  const directory = await mkdtemp(join(tmpdir(), prefix))
  const template = env[dataDirVariable]
  const target = join(directory, "pglite")
  if (template === undefined || template === "") await mkdir(target)
  else await cp(template, target, { recursive: true })
  return directory
}

/** `makeDataDir` for a scope: the directory is removed when the scope closes. @since 0.1.0 */
export const scopedDataDir = (prefix: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => makeDataDir(prefix)),
    (directory) => Effect.promise(() => rm(directory, { recursive: true, force: true }))
  )

/**
 * The back ends a storage suite runs on: PGlite in memory always, and a fresh PostgreSQL database
 * on the server of `DATABASE_URL` when it is set.
 * @since 0.1.0
 */
export const backends = (env: Record<string, string | undefined> = process.env) => {
  const url = env.DATABASE_URL
  const snapshot = env[snapshotVariable]
  return [
    {
      name: "pglite",
      config: Effect.succeed<Database.DatabaseConfig>({
        _tag: "Embedded",
        dataDir: "memory://",
        ...(snapshot === undefined || snapshot === "" ? {} : { snapshot })
      })
    },
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

/** A database layer for one back end, dropped when the layer is released. @since 0.1.0 */
export const layer = (backend: ReturnType<typeof backends>[number]) =>
  Layer.unwrapScoped(Effect.map(backend.config, Database.layer))

/**
 * Waits (in real time) until every stored event is behind the outbox's horizon, so one `fanOutAll`
 * reads them all: a transaction in another database of the server may hold them back. Gives up
 * after about 10 s, leaving the test's assertion to say what is missing.
 * @since 0.1.0
 */
export const eventsVisible: Effect.Effect<void, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (let tries = 0; tries < 500; tries++) {
    const [row] = yield* sql<{ visible: boolean }>`
      SELECT COALESCE((SELECT max(xid) FROM events) < pg_snapshot_xmin(pg_current_snapshot()), true) AS visible`
    if (row?.visible === true) return
    yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
  }
}).pipe(Effect.orDie)

/**
 * Counts into `delivery_hours` every delivery of the database in context, as the statements that
 * make deliveries and change their status would have: for benchmarks and tests that write deliveries with SQL of their
 * own. Run it once, on a table of deliveries written that way.
 * @since 0.3.0
 */
export const fillDeliveryHours: Effect.Effect<void, unknown, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql`
      WITH changed AS (SELECT webhook_id, event_created_at, status, latency_ms, 1 AS sign FROM deliveries)
      ${sql.literal(rollHours)}`
).pipe(Effect.asVoid)
