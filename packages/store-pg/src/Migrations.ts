/**
 * The schema as one ordered list of migrations, for PostgreSQL and PGlite alike, in a schema of
 * Waybill's own (docs/operations.md, A schema of its own). Add a migration; never edit a shipped one.
 * @since 0.1.0
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TimeRanges from "./internal/timeRanges.js"
import workspacesAndApiKeys from "./migrations/0001_workspaces_and_api_keys.js"
import draftsAndEvents from "./migrations/0002_drafts_and_events.js"
import tours from "./migrations/0003_tours.js"
import webhooks from "./migrations/0004_webhooks.js"
import deliveryFillfactor from "./migrations/0005_delivery_fillfactor.js"
import outboxPosition from "./migrations/0006_outbox_position.js"
import webhookRevision from "./migrations/0007_webhook_revision.js"
import deliveryCycles from "./migrations/0008_delivery_cycles.js"
import secretRotation from "./migrations/0009_secret_rotation.js"
import idempotencyKeys from "./migrations/0010_idempotency_keys.js"
import flowControl from "./migrations/0011_flow_control.js"
import traceContext from "./migrations/0012_trace_context.js"
import deliveryStatsIndex from "./migrations/0013_delivery_stats_index.js"
import heldDeliveriesIndex from "./migrations/0014_held_deliveries_index.js"
import eventOrderingKey from "./migrations/0015_event_ordering_key.js"
import consoleTokens from "./migrations/0016_console_tokens.js"
import abandonedAttempts from "./migrations/0017_abandoned_attempts.js"
import timeRanges from "./migrations/0018_time_ranges.js"
import rateSchedule from "./migrations/0019_rate_schedule.js"
import deliveryOrderingKey from "./migrations/0020_delivery_ordering_key.js"
import deliveryHours from "./migrations/0021_delivery_hours.js"
import webhookChanges from "./migrations/0022_webhook_changes.js"
import missedSlots from "./migrations/0023_missed_slots.js"

/** Every migration, keyed `NNNN_name` as the migrator expects. @since 0.1.0 */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_workspaces_and_api_keys": workspacesAndApiKeys,
  "0002_drafts_and_events": draftsAndEvents,
  "0003_tours": tours,
  "0004_webhooks": webhooks,
  "0005_delivery_fillfactor": deliveryFillfactor,
  "0006_outbox_position": outboxPosition,
  "0007_webhook_revision": webhookRevision,
  "0008_delivery_cycles": deliveryCycles,
  "0009_secret_rotation": secretRotation,
  "0010_idempotency_keys": idempotencyKeys,
  "0011_flow_control": flowControl,
  "0012_trace_context": traceContext,
  "0013_delivery_stats_index": deliveryStatsIndex,
  "0014_held_deliveries_index": heldDeliveriesIndex,
  "0015_event_ordering_key": eventOrderingKey,
  "0016_console_tokens": consoleTokens,
  "0017_abandoned_attempts": abandonedAttempts,
  "0018_time_ranges": timeRanges,
  "0019_rate_schedule": rateSchedule,
  "0020_delivery_ordering_key": deliveryOrderingKey,
  "0021_delivery_hours": deliveryHours,
  "0022_webhook_changes": webhookChanges,
  "0023_missed_slots": missedSlots
}

/** The table that records applied migrations, in Waybill's schema. @since 0.1.0 */
export const table = "waybill_migrations"

/** The schema Waybill keeps its tables in unless configured otherwise. @since 0.1.0 */
export const defaultSchema = "waybill"

/**
 * Why a name cannot be Waybill's schema, or `None`: a lower-case identifier that needs no quoting,
 * at most 56 characters so that `<schema>_events` fits PostgreSQL's 63, not a system schema.
 * @since 0.1.0
 */
export const schemaProblem = (name: string): Option.Option<string> => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) {
    return Option.some(
      "must be a lower-case PostgreSQL identifier: letters a-z, digits and _, not starting with a digit"
    )
  }
  if (name.length > 56) return Option.some("must be at most 56 characters")
  if (name.startsWith("pg_") || name === "information_schema") return Option.some("must not be a system schema")
  return Option.none()
}

// The tables created in `public` before Waybill had a schema of its own (up to 0008).
const publicLayoutTables = [
  "workspaces",
  "api_keys",
  "drafts",
  "events",
  "tours",
  "webhooks",
  "deliveries",
  "alerts",
  "fan_out"
] as const
const publicLayoutLastMigration = 8

// The advisory lock's first key; the second is the schema's.
const lockPurpose = 0x57617962 // "Wayb"

const oneLine = (text: string) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > 240 ? `${flat.slice(0, 239)}…` : flat
}

const reasonOf = (error: unknown): string => {
  let current: unknown = error
  for (let depth = 0; depth < 5; depth++) {
    if (typeof current !== "object" || current === null) break
    const { code, message, detail } = current as { code?: unknown; message?: unknown; detail?: unknown }
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && typeof message === "string") {
      return `${message}${typeof detail === "string" ? ` (${detail})` : ""} [SQLSTATE ${code}]`
    }
    if (!("cause" in current) || (current as { cause?: unknown }).cause === undefined) {
      return current instanceof Error ? current.message : String(current)
    }
    current = (current as { cause?: unknown }).cause
  }
  return String(current)
}

// Moves an installation made before the schema out of `public`: each table moves whole, nothing
// is copied, and nothing else in `public` is touched.
const movePublicLayout = (sql: SqlClient.SqlClient, schema: string) =>
  Effect.gen(function* () {
    if (schema === "public") return
    const [found] = yield* sql<{ old: boolean; current: boolean }>`
      SELECT to_regclass(${`public.${table}`}) IS NOT NULL AS old,
             to_regclass(${`${schema}.${table}`}) IS NOT NULL AS current`
    if (!found?.old) return
    if (found.current) {
      yield* Effect.logWarning(
        `public.${table} exists beside ${schema}.${table}: Waybill uses ${schema} and leaves public as it is`
      )
      return
    }
    const [latest] = yield* sql<{ id: number | null }>`SELECT max(migration_id) AS id FROM public.${sql(table)}`
    if ((latest?.id ?? 0) > publicLayoutLastMigration) {
      return yield* new Migrator.MigrationError({
        reason: "bad-state",
        message: `public.${table} records migration ${latest?.id}, made after Waybill moved to a schema of its own; this version cannot tell which tables of public are Waybill's (move them into schema ${schema} by hand, with ${table})`
      })
    }
    const present = yield* sql<{ name: string }>`
      SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname IN ${sql.in(publicLayoutTables)}`
    const names = new Set(present.map((row) => row.name))
    for (const name of [...publicLayoutTables.filter((name) => names.has(name)), table]) {
      yield* sql`ALTER TABLE public.${sql(name)} SET SCHEMA ${sql(schema)}`
    }
    yield* Effect.logInfo(`Moved Waybill's ${names.size} tables and ${table} from public into schema ${schema}`)
  })

/**
 * Applies every pending migration in `schema`, in one transaction under an advisory lock, so
 * several processes may start at once. A failure names the migration, statement and reason.
 * @since 0.1.0
 */
export const runIn = (
  schema: string
): Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, Migrator.MigrationError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const problem = schemaProblem(schema)
    if (Option.isSome(problem)) {
      return yield* new Migrator.MigrationError({ reason: "bad-state", message: `schema ${schema}: ${problem.value}` })
    }
    const sql = yield* SqlClient.SqlClient
    // The statement running when something fails, for the message.
    let current: Statement.Statement<unknown> | undefined
    let step = "preparing the schema"
    const migrate = sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`SELECT pg_advisory_xact_lock(${lockPurpose}, hashtext(${schema}))`
        // Local to this transaction: the connection's own setting is back after it.
        yield* sql`SELECT set_config('search_path', ${schema}, true)`
        const exists = yield* sql`SELECT 1 FROM pg_namespace WHERE nspname = ${schema}`
        if (exists.length === 0) yield* sql`CREATE SCHEMA ${sql(schema)}`
        yield* movePublicLayout(sql, schema)
        // The migrator's own check for its table (`::regclass`) would abort this transaction.
        yield* sql`
          CREATE TABLE IF NOT EXISTS ${sql(table)} (
            migration_id integer PRIMARY KEY,
            created_at timestamp with time zone NOT NULL DEFAULT now(),
            name text NOT NULL
          )`
        step = "migrating"
        const applied = yield* Migrator.make({})({ loader: Migrator.fromRecord(migrations), table })
        step = "creating time ranges"
        yield* TimeRanges.bridge(sql, yield* Clock.currentTimeMillis)
        return applied
      })
    )
    const failure = (error: unknown, what: string) =>
      new Migrator.MigrationError({
        reason: "failed",
        cause: error,
        message: `${what}${current === undefined ? "" : ` at statement \`${oneLine(current.compile()[0])}\``}: ${reasonOf(error)}`
      })
    // Before the migrations' transaction: statements that must commit alone (0018's check).
    const prepareThenMigrate = Effect.gen(function* () {
      step = "preparing time ranges"
      yield* TimeRanges.prepareConversion(sql, schema, yield* Clock.currentTimeMillis)
      return yield* migrate
    })
    return yield* prepareThenMigrate.pipe(
      Statement.withTransformer((statement) =>
        Effect.sync(() => {
          current = statement
          return statement
        })
      ),
      // The migrator ends a failed migration as a defect whose message names only the migration.
      Effect.catchAllDefect((defect) =>
        defect instanceof Migrator.MigrationError
          ? Effect.fail(failure(defect.cause, defect.message))
          : Effect.die(defect)
      ),
      Effect.catchIf(
        (error): error is SqlError => error instanceof SqlError,
        (error) => Effect.fail(failure(error, `Schema ${schema}: ${step} failed`))
      )
    )
  })

/** `runIn` the default schema, `waybill`. @since 0.1.0 */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError,
  SqlClient.SqlClient
> = runIn(defaultSchema)
