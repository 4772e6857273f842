/**
 * The time ranges of the growing tables (events, deliveries, alerts), partitioned by the time in
 * their ids (ids sort by their making time; a delivery's id carries its event's time). Ranges are
 * created as plain tables and attached, and detached concurrently before they are dropped, so
 * neither locks more than a share-update lock on the table: publishing never waits for them
 * (docs/decisions/0113). No DEFAULT range: a detach never scans or locks another range.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Id from "@waybill/core/Id"
import type * as Retention from "@waybill/webhooks/Retention"
import { aligned, defaultRetentionMs, rangeMs } from "@waybill/webhooks/Retention"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { rollHours } from "./deliveryHours.js"

/** A table kept by time ranges: its name and the prefix of its ids. */
export interface RangedTable {
  readonly name: "events" | "deliveries" | "alerts"
  readonly prefix: Id.Prefix
}

/** The events table. */
export const events: RangedTable = { name: "events", prefix: "evt" }

/** The deliveries table. */
export const deliveries: RangedTable = { name: "deliveries", prefix: "dlv" }

/** The alerts table. */
export const alerts: RangedTable = { name: "alerts", prefix: "alr" }

/** The three, in the order removal drops them (deliveries first: they are expired before). */
export const tables: ReadonlyArray<RangedTable> = [deliveries, events, alerts]

/** The smallest id made at `millis` or later: the prefix and the id's time part. */
export const bound = (prefix: Id.Prefix, millis: number): string =>
  Id.format(prefix, millis, new Uint8Array(10)).slice(0, prefix.length + 11)

/** The time of a bound made by `bound`. */
export const boundTime = (text: string): Option.Option<number> => Id.timeOf(text.padEnd(text.indexOf("_") + 27, "0"))

/** A range of one table as the catalogue shows it. */
export interface StoredRange extends Retention.Range {
  readonly table: string
  /** Detached concurrently by a run that did not finish: to be finalized. */
  readonly detaching: boolean
}

const partitionBound = /FROM \((?:MINVALUE|'([^']*)')\) TO \('([^']*)'\)/

/** The ranges of `table`, oldest first. */
export const list = (sql: SqlClient.SqlClient, table: RangedTable): Effect.Effect<Array<StoredRange>, SqlError> =>
  Effect.map(
    sql<{ name: string; bound: string; detaching: boolean }>`
      SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound, i.inhdetachpending AS detaching
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = ${table.name}::regclass`,
    (rows) =>
      rows
        .flatMap((row) => {
          const match = partitionBound.exec(row.bound)
          const to = match?.[2] === undefined ? Option.none() : boundTime(match[2])
          if (match === null || Option.isNone(to)) return []
          const from = match[1] === undefined ? null : Option.getOrNull(boundTime(match[1]))
          return [{ table: row.name, from, to: to.value, detaching: row.detaching }]
        })
        .sort((a, b) => (a.from ?? Number.NEGATIVE_INFINITY) - (b.from ?? Number.NEGATIVE_INFINITY))
  )

/** The name of a range starting at `from`: the table and the range's time part (`deliveries_r01jx…`). */
export const rangeName = (table: RangedTable, from: number): string =>
  `${table.name}_r${bound(table.prefix, from).slice(table.prefix.length + 1)}`

/**
 * Creates the range `[from, to)`: a plain table shaped like the parent, then attached (a
 * share-update lock on the parent; the range's indexes are made on the empty table).
 */
export const create = (sql: SqlClient.SqlClient, table: RangedTable, range: Retention.Range) =>
  Effect.gen(function* () {
    const name = rangeName(table, range.from ?? 0)
    // Deliveries leave room on each page for their lease updates (0005).
    yield* table.name === "deliveries"
      ? sql`CREATE TABLE ${sql(name)} (LIKE deliveries INCLUDING DEFAULTS) WITH (fillfactor = 70)`
      : sql`CREATE TABLE ${sql(name)} (LIKE ${sql(table.name)} INCLUDING DEFAULTS)`
    yield* sql`
      ALTER TABLE ${sql(table.name)} ATTACH PARTITION ${sql(name)}
      FOR VALUES FROM (${sql.literal(quote(bound(table.prefix, range.from ?? 0)))})
      TO (${sql.literal(quote(bound(table.prefix, range.to)))})`
  })

const quote = (text: string) => `'${text.replace(/'/g, "''")}'`

// Whether a client is PGlite's one session, where a concurrent detach would wait for transactions
// of other connections that cannot go on until it ends.
const embedded = new WeakMap<SqlClient.SqlClient, boolean>()

const isEmbedded = (sql: SqlClient.SqlClient) =>
  Effect.suspend(() => {
    const known = embedded.get(sql)
    if (known !== undefined) return Effect.succeed(known)
    return Effect.map(sql<{ embedded: boolean }>`SELECT version() LIKE '%PGlite%' AS embedded`, ([row]) => {
      embedded.set(sql, row?.embedded === true)
      return row?.embedded === true
    })
  })

/**
 * Drops a range: on PostgreSQL detached concurrently (never inside a transaction: it waits for the
 * readers that may still see it, holding no lock that publishing waits for), then dropped alone.
 * PGlite runs one statement at a time anyway: there it is detached plainly.
 */
export const drop = (sql: SqlClient.SqlClient, table: RangedTable, range: StoredRange) =>
  Effect.gen(function* () {
    yield* range.detaching
      ? sql`ALTER TABLE ${sql(table.name)} DETACH PARTITION ${sql(range.table)} FINALIZE`
      : (yield* isEmbedded(sql))
        ? sql`ALTER TABLE ${sql(table.name)} DETACH PARTITION ${sql(range.table)}`
        : sql`ALTER TABLE ${sql(table.name)} DETACH PARTITION ${sql(range.table)} CONCURRENTLY`
    yield* sql`DROP TABLE ${sql(range.table)}`
  })

// How many rows a statement counted, and the attempts they held.
const rowsAndAttempts = ([row]: ReadonlyArray<{ rows: number; attempts: number }>) => ({
  rows: Number(row?.rows ?? 0),
  attempts: Number(row?.attempts ?? 0)
})

/** Rows of a range about to be dropped: how many, and for deliveries how many attempts they hold. */
export const count = (sql: SqlClient.SqlClient, table: RangedTable, name: string) =>
  Effect.map(
    sql<{ rows: number; attempts: number }>`
      SELECT count(*)::int AS rows,
             ${table.name === "deliveries" ? sql`coalesce(sum(jsonb_array_length(attempts)), 0)::int` : sql`0`} AS attempts
      FROM ${sql(name)}`,
    rowsAndAttempts
  )

/** Rows deleted from the range of everything before per statement (a short transaction each). */
export const trimBatch = 5_000

/**
 * Deletes at most `trimBatch` rows older than `below` from the range of everything before (rows
 * kept from before time ranges); answers how many, and the attempts they held.
 */
export const trim = (sql: SqlClient.SqlClient, table: RangedTable, name: string, below: number) =>
  Effect.map(
    sql<{ rows: number; attempts: number }>`
      WITH gone AS (
        DELETE FROM ${sql(name)} WHERE id IN (
          SELECT id FROM ${sql(name)} WHERE id < ${bound(table.prefix, below)} LIMIT ${trimBatch}
        ) RETURNING ${table.name === "deliveries" ? sql`jsonb_array_length(attempts)` : sql`0`} AS attempts
      )
      SELECT count(*)::int AS rows, coalesce(sum(attempts), 0)::int AS attempts FROM gone`,
    rowsAndAttempts
  )

/** A delivery that expired, as the expiry answers it. */
export interface ExpiredRow {
  readonly workspace_id: string
  readonly webhook_id: string
  readonly count: number
  readonly delivery_id: string
  readonly event_id: string
  readonly event_type: string
}

/**
 * Ends the open (`pending` or `held`) deliveries of a range as `expired` (only those older than
 * `below` when given); answers one row per webhook: how many, and the last one.
 */
export const expire = (sql: SqlClient.SqlClient, name: string, below: string | null) =>
  sql<ExpiredRow>`
    WITH open AS (
      -- Locked, so the status each had before is the one this statement ends.
      SELECT id, status FROM ${sql(name)}
      WHERE status IN ('pending', 'held') ${below === null ? sql`` : sql`AND id < ${below}`}
      FOR UPDATE
    ), expired AS (
      UPDATE ${sql(name)} d SET status = 'expired', lease_until = NULL, lease_token = NULL
      FROM open o WHERE d.id = o.id
      RETURNING d.workspace_id, d.webhook_id, d.id, d.event_id, d.event_type, d.event_created_at, o.status AS was
    ), changed AS (
      SELECT webhook_id, event_created_at, was AS status, NULL::int AS latency_ms, -1 AS sign FROM expired
    ), rolled AS (${sql.literal(rollHours)}), last AS (
      SELECT workspace_id, webhook_id, count(*)::int AS count, max(id) AS id FROM expired
      GROUP BY workspace_id, webhook_id
    )
    SELECT l.workspace_id, l.webhook_id, l.count, e.id AS delivery_id, e.event_id, e.event_type
    FROM last l JOIN expired e ON e.id = l.id`

// The ranges each client has seen, per table: a write checks its ids here, and reads the catalogue
// only for a time outside them.
const seen = new WeakMap<SqlClient.SqlClient, Map<string, ReadonlyArray<Retention.Range>>>()

const within = (ranges: ReadonlyArray<Retention.Range>, time: number) =>
  ranges.some((range) => (range.from === null || range.from <= time) && time < range.to)

/**
 * Makes sure a range holds each of `ids` before they are written, so that no write fails for want
 * of a range: removal runs create ranges ahead, but a clock far ahead, a host that does not run
 * them, or a long stop would otherwise leave a time without one. A missing range is made in the gap
 * around its time, sized as the newest range (as removal runs make them for the retention); a range
 * another process made at once is taken as it is.
 * In a transaction it is made under a savepoint, so a lost race does not end the transaction, and
 * what it lists is not kept: the range goes if the transaction rolls back.
 */
export const cover = (sql: SqlClient.SqlClient, table: RangedTable, ids: ReadonlyArray<string>): Effect.Effect<void> =>
  Effect.suspend(() => {
    let tables = seen.get(sql)
    if (tables === undefined) {
      tables = new Map()
      seen.set(sql, tables)
    }
    const known = tables.get(table.name) ?? []
    const missing = ids.flatMap((id) => {
      const time = Option.getOrUndefined(Id.timeOf(id))
      return time === undefined || within(known, time) ? [] : [time]
    })
    if (missing.length === 0) return Effect.void
    const cache = tables
    return Effect.gen(function* () {
      // Inside a transaction the catalogue shows its own uncommitted ranges too: one that rolls
      // back (or another transaction of this client writing meanwhile) must not trust them.
      const committed = Option.isNone(yield* Effect.serviceOption(SqlClient.TransactionConnection))
      let ranges = yield* list(sql, table)
      for (const time of missing) {
        if (within(ranges, time)) continue
        // The size removal runs make (the newest range's), else the default window's.
        const newest = ranges.reduce<Retention.Range | undefined>(
          (found, range) => (range.from !== null && (found === undefined || range.to > found.to) ? range : found),
          undefined
        )
        const size = newest === undefined ? rangeMs(defaultRetentionMs) : newest.to - (newest.from ?? 0)
        const before = ranges
          .filter((range) => range.to <= time)
          .reduce((end, range) => Math.max(end, range.to), Number.NEGATIVE_INFINITY)
        const after = ranges
          .filter((range) => range.from !== null && range.from > time)
          .reduce((start, range) => Math.min(start, range.from ?? start), Number.POSITIVE_INFINITY)
        const from = Math.max(before, Math.floor(time / size) * size)
        const to = Math.min(after, (Math.floor(time / size) + 1) * size)
        yield* sql.withTransaction(create(sql, table, { from, to })).pipe(Effect.ignore)
        ranges = yield* list(sql, table)
      }
      if (committed) cache.set(table.name, ranges)
    }).pipe(Effect.orDie)
  })

/** The check that proves an unconverted table's rows lie below the bound of its range of everything before. */
export const beforeCheck = (table: RangedTable): string => `${table.name}_before_ranges`

const checkBound = /'([a-z]+_[0-9a-z]{10})'/

/** The bound a table's check proves, if it has one. */
export const checkedBound = (sql: SqlClient.SqlClient, table: RangedTable, qualified: string) =>
  Effect.map(
    sql<{ def: string }>`
      SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint
      WHERE conrelid = ${qualified}::regclass AND conname = ${beforeCheck(table)} AND convalidated`,
    ([row]) => {
      const found = row === undefined ? null : checkBound.exec(row.def)
      return found?.[1] === undefined ? Option.none<string>() : Option.some(found[1])
    }
  )

/**
 * Before the migration that converts a table (0018) can attach it as its range of everything before
 * without scanning it under a lock: a validated check that every row lies below a bound a day ahead
 * (its scan holds no lock that writes wait for), and the held deliveries' order index built
 * concurrently. Each statement commits alone; a bound less than half a day ahead is renewed, so a
 * conversion that failed and is retried later still finds the rows of the hours between below it.
 */
export const prepareConversion = (sql: SqlClient.SqlClient, schema: string, now: number) =>
  Effect.gen(function* () {
    for (const table of tables) {
      const qualified = `${schema}.${table.name}`
      const [found] = yield* sql<{ kind: string }>`
        SELECT c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ${schema} AND c.relname = ${table.name}`
      if (found?.kind !== "r") continue
      const existing = yield* checkedBound(sql, table, qualified)
      const lasting = Option.exists(existing, (text) =>
        Option.exists(boundTime(text), (millis) => millis >= now + 12 * 3_600_000)
      )
      if (!lasting) {
        const next = bound(table.prefix, now + 24 * 3_600_000)
        yield* sql`ALTER TABLE ${sql(qualified)} DROP CONSTRAINT IF EXISTS ${sql(beforeCheck(table))}`
        yield* sql`
          ALTER TABLE ${sql(qualified)} ADD CONSTRAINT ${sql(beforeCheck(table))}
          CHECK (id < ${sql.literal(quote(next))}) NOT VALID`.pipe(
          // Another process starting at once added it first.
          Effect.catchIf(
            (error) => (error.cause as { code?: unknown } | undefined)?.code === "42710",
            () => Effect.void
          )
        )
      }
      yield* sql`ALTER TABLE ${sql(qualified)} VALIDATE CONSTRAINT ${sql(beforeCheck(table))}`
      if (table.name === "deliveries") {
        const invalid = yield* sql`
          SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = ${schema} AND c.relname = 'deliveries_held_order_idx' AND NOT i.indisvalid`
        if (invalid.length > 0) yield* sql`DROP INDEX CONCURRENTLY ${sql(`${schema}.deliveries_held_order_idx`)}`
        yield* sql`
          CREATE INDEX CONCURRENTLY IF NOT EXISTS deliveries_held_order_idx
          ON ${sql(qualified)} (webhook_id, id) WHERE status = 'held'`
      }
    }
  })

/**
 * Ranges of a minute each from the newest range to two minutes past `now`, made by the migrations
 * under their lock: a host that publishes into a database Waybill has just migrated finds a range
 * before any process of Waybill's runs (which goes on from them with ranges sized by the
 * retention, `Retention.layerRanges`). Few, since every migrated database pays for them.
 */
export const bridge = (sql: SqlClient.SqlClient, now: number) =>
  Effect.forEach(
    tables,
    (table) =>
      Effect.flatMap(list(sql, table), (ranges) => {
        const minute = 60_000
        const end = ranges.reduce((newest, range) => Math.max(newest, range.to), Math.floor(now / minute) * minute)
        return Effect.forEach(aligned(end, now + 2 * minute, minute), (range) => create(sql, table, range))
      }),
    { discard: true }
  )
