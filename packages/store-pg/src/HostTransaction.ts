/**
 * Publishing an event inside a host's own open PostgreSQL transaction, on its own connection
 * (contract §9): the host's write and the event commit together or not at all, and the commit wakes
 * delivery in every Waybill process. The SQL names Waybill's schema; the connection's `search_path`
 * is neither read nor changed.
 * @since 0.2.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as ValidationError from "@waybill/core/ValidationError"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { decodeEvent } from "@waybill/events/EventIntake"
import { countPublished, type RecordedEvent, recordAll } from "@waybill/events/EventOutbox"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import { schemaProblem } from "./Migrations.js"
import { channelOf } from "./PgEventOutbox.js"

/**
 * Anything with node-postgres' `query(text, values)` and `$1`-style placeholders: a pg `Client` or
 * `PoolClient` as it is; Kysely, Drizzle and Knex transactions through an adapter of a few lines
 * (examples/embed/src/adapters.ts). Its result is not read.
 * @since 0.2.0
 */
export interface Executor {
  readonly query: (text: string, values: Array<unknown>) => PromiseLike<unknown>
}

/**
 * A problem of the executor or its database (no Waybill schema there, a failed statement), or a
 * schema name that cannot be Waybill's; the message names the schema and never holds a value.
 * @since 0.2.0
 */
export class HostTransactionError extends Data.TaggedError("HostTransactionError")<{ readonly message: string }> {}

/** Where the event goes: Waybill's schema in the executor's database, and the workspace. @since 0.2.0 */
export interface Options {
  /** The schema Waybill migrated (`waybill` unless configured otherwise; `Migrations.schemaProblem`). */
  readonly schema: string
  readonly workspaceId: WorkspaceId
}

const HEAD = "WITH inserted AS"

// One text per schema, so a driver may prepare it; the notification goes out at COMMIT, as the
// outbox's own (PgEventOutbox), on the schema's channel. The schema is checked before it gets here.
const statementOf = (schema: string): string =>
  `${HEAD} (INSERT INTO "${schema}".events (id, workspace_id, type, created_at, body, traceparent, ordering_key) ` +
  "VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING 1) " +
  `SELECT pg_notify('${channelOf(schema)}', pg_current_xact_id()::text) FROM inserted`

const valuesOf = (event: RecordedEvent): Array<unknown> => [
  event.id,
  event.workspaceId,
  event.type,
  event.createdAt,
  event.body,
  event.traceparent,
  event.orderingKey
]

// undefined_table, invalid_schema_name: the database has no (or not this) Waybill schema.
const NO_SCHEMA = new Set(["42P01", "3F000"])

// What went wrong, without the statement's values: the innermost error with a SQLSTATE (PostgreSQL's
// own message), else the innermost error, as drivers and query builders wrap it (Drizzle and Effect
// add their own message and keep the driver's as `cause`, or in the failure's cause when an executor
// runs an Effect; Knex writes the statement with its values in front of the driver's message,
// ending with " - ").
const reasonOf = (error: unknown): { readonly code: string | undefined; readonly message: string } => {
  let current: unknown = error
  let innermost: { readonly code: string | undefined; readonly message: string } = {
    code: undefined,
    message: String(error)
  }
  let database: typeof innermost | undefined
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown }
    if (typeof message === "string") {
      innermost = { code: undefined, message }
      if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) database = { code, message }
    }
    current = Runtime.isFiberFailure(current)
      ? Cause.squash(current[Runtime.FiberFailureCauseId])
      : (current as { cause?: unknown }).cause
  }
  const found = database ?? innermost
  const at = found.message.indexOf(HEAD)
  if (at < 0) return found
  const end = found.message.lastIndexOf(" - ")
  return { code: found.code, message: end > at ? found.message.slice(end + 3) : "the statement failed" }
}

const failureOf = (schema: string, error: unknown): HostTransactionError => {
  const reason = reasonOf(error)
  if (reason.code !== undefined && NO_SCHEMA.has(reason.code)) {
    return new HostTransactionError({
      message: `The database has no Waybill schema "${schema}" (${reason.message}): Waybill creates and migrates it when it starts with DATABASE_URL pointing at this database and WAYBILL_DATABASE_SCHEMA=${schema}`
    })
  }
  const code = reason.code === undefined ? "" : ` [SQLSTATE ${reason.code}]`
  if (reason.code === "23514" && reason.message.startsWith("no partition")) {
    return new HostTransactionError({
      message: `Publishing into Waybill schema "${schema}" failed: no time range holds the event's time (${reason.message}${code}); Waybill's processes create ranges ahead of their clock while they run (docs/operations.md, Retention): is one running, and is this host's clock close to theirs?`
    })
  }
  return new HostTransactionError({
    message: `Publishing into Waybill schema "${schema}" failed: ${reason.message}${code}`
  })
}

/**
 * `publishIn` over any way of running one statement: checks the schema and the event before any
 * SQL, then runs the insert and its notification as one statement.
 */
const publishOver = <E>(
  run: (text: string, values: Array<unknown>) => Effect.Effect<unknown, E>,
  options: Options,
  input: unknown
): Effect.Effect<RecordedEvent, ValidationError.ValidationError | HostTransactionError> =>
  Effect.gen(function* () {
    const problem = schemaProblem(options.schema)
    if (Option.isSome(problem)) {
      return yield* new HostTransactionError({ message: `Waybill schema "${options.schema}": ${problem.value}` })
    }
    const decoded = decodeEvent(input, { traceparent: true })
    if (Either.isLeft(decoded)) return yield* ValidationError.fromIssues(decoded.left, "event")
    const [event] = yield* recordAll(options.workspaceId, [decoded.right])
    yield* run(statementOf(options.schema), valuesOf(event!)).pipe(
      Effect.mapError((error) => failureOf(options.schema, error))
    )
    yield* countPublished([event])
    return event!
  })

/**
 * Publishes an event (`{ type, payload, orderingKey?, traceparent? }`, checked exactly as
 * `POST /events` checks its body) in the transaction open on `executor`, with one statement: the
 * row in `"<schema>".events` and a notification on `<schema>_events` delivered at COMMIT. An
 * invalid event sends nothing, so the transaction stays usable. Without `traceparent`, the event
 * starts a trace of its own (or continues the fiber's span).
 * @since 0.2.0
 */
export const publishIn = (
  executor: Executor,
  options: Options,
  input: unknown
): Effect.Effect<RecordedEvent, ValidationError.ValidationError | HostTransactionError> =>
  publishOver(
    (text, values) => Effect.tryPromise({ try: () => executor.query(text, values), catch: (error) => error }),
    options,
    input
  )

/**
 * `publishIn` for a host on `@effect/sql`: the statement runs on `sql` in the calling fiber, so
 * inside `sql.withTransaction` it is part of that transaction (a Promise executor made with
 * `Effect.runPromise` would run outside it, on another connection).
 * @since 0.2.0
 */
export const publishInWith = (
  sql: SqlClient.SqlClient,
  options: Options,
  input: unknown
): Effect.Effect<RecordedEvent, ValidationError.ValidationError | HostTransactionError> =>
  publishOver((text, values) => sql.unsafe(text, values), options, input)
