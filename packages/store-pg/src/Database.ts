/**
 * One database layer for PostgreSQL (`DATABASE_URL`) and the embedded PGlite, both through
 * `@effect/sql-pg`, migrated when it starts. Every connection it opens has Waybill's schema as
 * its `search_path`; a host's connections are never altered.
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { MigrationError } from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Availability } from "@waybill/core/Availability"
import { Transactor } from "@waybill/core/Transactor"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Pg from "pg"
import * as StorageAvailability from "./internal/availability.js"
import * as Embedded from "./internal/embedded.js"
import { PreparingClient } from "./internal/preparedStatements.js"
import * as Migrations from "./Migrations.js"

/** Where the data lives. @since 0.1.0 */
export type DatabaseConfig =
  | {
      readonly _tag: "Postgres"
      readonly url: Redacted.Redacted<string>
      readonly maxConnections?: number
      /** The schema of Waybill's tables (`waybill` when omitted; see `Migrations.schemaProblem`). */
      readonly schema?: string | undefined
    }
  | {
      readonly _tag: "Embedded"
      /** A directory, or `memory://` for a database that lives as long as the layer. */
      readonly dataDir: string
      /** The schema of Waybill's tables (`waybill` when omitted). */
      readonly schema?: string | undefined
      /**
       * In memory only: a file holding a data directory dumped by PGlite's `dumpDataDir`, to
       * start from instead of an empty database (tests start from a migrated one: loading takes
       * a fraction of creating and migrating).
       */
      readonly snapshot?: string | undefined
    }

/** The schema a configuration keeps Waybill's tables in. @since 0.1.0 */
export const schemaOf = (config: DatabaseConfig): string => config.schema ?? Migrations.defaultSchema

/** Failure to open the embedded database (unreadable directory, another process holding it...). @since 0.1.0 */
export { EmbeddedStartError } from "./internal/embedded.js"

// int8 columns come back as numbers: every value stored in them is far below 2^53.
const INT8_OID = 20
const types: Pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID && format !== "binary"
      ? (value: string) => Number(value)
      : Pg.types.getTypeParser(oid, format)) as Pg.CustomTypesConfig["getTypeParser"]
}

const transactorFrom = (sql: SqlClient.SqlClient) =>
  Transactor.of({
    withTransaction: (self) =>
      sql.withTransaction(self).pipe(
        // BEGIN/COMMIT failures are faults, not domain errors (adapters' own SQL failures are defects too).
        Effect.catchIf((error): error is SqlError => error instanceof SqlError, Effect.die)
      ) as typeof self
  })

// Our own pool, so its connections keep their statements prepared. The driver's connect deadline
// bounds every connect: a timeout around an uninterruptible acquire would never fire against a
// host that accepts TCP but never speaks PostgreSQL.
const connectTimeoutMs = 5_000

const postgresPool = (url: string, maxConnections: number, schema: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const pool = new Pg.Pool({
          connectionString: url,
          max: maxConnections,
          application_name: "waybill",
          options: searchPathOption(schema),
          connectionTimeoutMillis: connectTimeoutMs,
          types,
          Client: PreparingClient
        })
        pool.on("error", () => {})
        try {
          await pool.query("SELECT 1")
        } catch (cause) {
          await pool.end()
          throw cause
        }
        return pool
      },
      catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
  )

/** Notifications on a channel of the database (`LISTEN`), provided by `layer` beside the client. @since 0.2.0 */
export class Notifications extends Context.Tag("@waybill/store-pg/Database/Notifications")<
  Notifications,
  {
    /**
     * Every notification on `channel`, empty ones too. On PostgreSQL the stream fails once its
     * connection is lost: listen again.
     */
    readonly listen: (channel: string) => Stream.Stream<string, SqlError>
  }
>() {}

// Not `PgClient.listen`, which drops empty notifications and ignores the connection's errors
// (after a restart of PostgreSQL its stream stays open and silent for good).
const listen =
  (url: string, schema: string) =>
  (channel: string): Stream.Stream<string, SqlError> =>
    Stream.asyncPush<string, SqlError>((emit) =>
      Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const client = new Pg.Client({
              connectionString: url,
              application_name: "waybill",
              options: searchPathOption(schema),
              connectionTimeoutMillis: connectTimeoutMs
            })
            const lost = (cause: unknown) =>
              emit.fail(new SqlError({ cause, message: "The connection listening for notifications was lost" }))
            client.on("error", lost)
            client.on("end", () => lost(new Error("Connection terminated")))
            client.on("notification", (message) => {
              if (message.channel === channel) emit.single(message.payload ?? "")
            })
            try {
              await client.connect()
              await client.query(`LISTEN ${Pg.escapeIdentifier(channel)}`)
            } catch (cause) {
              client.removeAllListeners()
              client.on("error", () => {})
              await client.end().catch(() => {})
              throw cause
            }
            return client
          },
          catch: (cause) => new SqlError({ cause, message: "Failed to listen" })
        }),
        (client) =>
          Effect.promise(() => {
            client.removeAllListeners()
            client.on("error", () => {})
            return client.end().catch(() => {})
          }).pipe(Effect.interruptible, Effect.timeoutOption(1000))
      )
    )

// A schema name that passed `Migrations.schemaProblem` needs no quoting.
const searchPathOption = (schema: string) => `-c search_path=${schema}`

const client = (config: DatabaseConfig, schema: string) =>
  Effect.gen(function* () {
    if (config._tag === "Postgres") {
      const url = Redacted.value(config.url)
      const pg = yield* PgClient.fromPool({
        acquire: postgresPool(url, config.maxConnections ?? 10, schema),
        applicationName: "waybill",
        types
      })
      return { pg, notifications: Notifications.of({ listen: listen(url, schema) }) }
    }
    // PGlite is one session for every connection (unnamed statements only, so none outlives a
    // broken connection), and it ignores start-up options: its session has the search_path.
    const embedded = yield* Embedded.acquire(config.dataDir, { searchPath: schema, snapshot: config.snapshot })
    const pg = yield* PgClient.make({
      host: embedded.socketDir,
      port: Embedded.SOCKET_PORT,
      username: "postgres",
      database: "postgres",
      maxConnections: Embedded.POOL_CONNECTIONS,
      applicationName: "waybill",
      types
    })
    return { pg, notifications: Notifications.of({ listen: (channel) => pg.listen(channel) }) }
  })

/**
 * The database, migrated (`Migrations.runIn`): `PgClient`, `SqlClient`, a `Transactor` over SQL
 * transactions, its `Availability` and `Notifications`. A schema name that is not a plain
 * identifier fails before anything is opened.
 * @since 0.1.0
 */
export const layer = (
  config: DatabaseConfig
): Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient | Transactor | Availability | Notifications,
  SqlError | MigrationError | Embedded.EmbeddedStartError
> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const schema = schemaOf(config)
      const problem = Migrations.schemaProblem(schema)
      if (Option.isSome(problem)) {
        return yield* new MigrationError({ reason: "bad-state", message: `schema ${schema}: ${problem.value}` })
      }
      const { notifications, pg } = yield* client(config, schema)
      yield* Migrations.runIn(schema).pipe(Effect.provideService(SqlClient.SqlClient, pg))
      return Context.make(PgClient.PgClient, pg).pipe(
        Context.add(SqlClient.SqlClient, pg),
        Context.add(Transactor, transactorFrom(pg)),
        Context.add(Availability, StorageAvailability.make(pg)),
        Context.add(Notifications, notifications)
      )
    })
  ).pipe(Layer.provide(Reactivity.layer))

/** Describes the configuration for logs, without credentials. @since 0.1.0 */
export const describe = (config: DatabaseConfig, url?: string): string => {
  if (config._tag === "Embedded") {
    return config.dataDir === "memory://" ? "embedded PGlite (in memory)" : `embedded PGlite at ${config.dataDir}`
  }
  if (url === undefined) return "PostgreSQL"
  try {
    const parsed = new URL(url)
    return `PostgreSQL at ${parsed.hostname}${parsed.port === "" ? "" : `:${parsed.port}`}${parsed.pathname}`
  } catch {
    return "PostgreSQL"
  }
}
