import * as Id from "@waybill/core/Id"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { migration } from "../internal/migration.js"
import * as TimeRanges from "../internal/timeRanges.js"

// Events, deliveries and alerts by time ranges of their ids (contract §8, Retention;
// docs/decisions/0113). Each table is renamed and becomes the range of everything before a bound
// under a new partitioned table of its name, with the same columns and indexes: nothing is copied.
// The attach reads no row: a validated check made before this transaction (`prepareConversion`)
// proves the bound, and the parent's indexes match the table's own. Processes of the previous
// release re-plan their prepared statements on the rename and write into the new table. Sequences
// take over from identities, which a partitioned table cannot have on PostgreSQL before 17.
export default migration(function* (sql) {
  const now = yield* Clock.currentTimeMillis
  for (const table of TimeRanges.tables) {
    const name = table.name
    const before = `${name}_before`
    const checked = yield* TimeRanges.checkedBound(sql, table, name)
    // Without a check (a table made or moved in this transaction), the bound lies past every row.
    const [newest] = yield* sql<{
      id: string | null
    }>`SELECT max(id) AS id FROM ${sql(name)}`
    const newestAt = Option.getOrElse(Option.flatMap(Option.fromNullable(newest?.id), Id.timeOf), () => 0)
    const upTo = Option.getOrElse(checked, () => TimeRanges.bound(table.prefix, Math.max(now, newestAt + 1)))
    const indexes = yield* sql<{ name: string }>`
      SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = ${name}::regclass`
    yield* sql`ALTER TABLE ${sql(name)} RENAME TO ${sql(before)}`
    for (const index of indexes) {
      yield* sql`ALTER INDEX ${sql(index.name)} RENAME TO ${sql(`${index.name}_before`)}`
    }
    if (name !== "alerts") {
      // The identity's own sequence, not max(seq): deliveries have no index on seq.
      const [last] = yield* sql<{ value: string | null }>`
        SELECT s.last_value::text AS value FROM pg_sequences s
        WHERE format('%I.%I', s.schemaname, s.sequencename)::regclass = pg_get_serial_sequence(${before}, 'seq')::regclass`
      yield* sql`ALTER TABLE ${sql(before)} ALTER COLUMN seq DROP IDENTITY`
      yield* sql`CREATE SEQUENCE ${sql(`${name}_seq`)}`
      if (last?.value != null) yield* sql`SELECT setval(${`${name}_seq`}, ${last.value}::bigint)`
    }
    yield* sql`CREATE TABLE ${sql(name)} (LIKE ${sql(before)} INCLUDING DEFAULTS) PARTITION BY RANGE (id)`
    if (name !== "alerts") {
      yield* sql`ALTER TABLE ${sql(name)} ALTER COLUMN seq SET DEFAULT nextval(${sql.literal(`'${name}_seq'`)})`
      yield* sql`ALTER SEQUENCE ${sql(`${name}_seq`)} OWNED BY ${sql(`${name}.seq`)}`
    }
    if (name === "events") {
      yield* sql`ALTER TABLE events ADD CONSTRAINT events_id_key UNIQUE (id)`
      yield* sql`CREATE INDEX events_fan_out_idx ON events (xid, seq)`
    } else if (name === "deliveries") {
      yield* sql`ALTER TABLE deliveries ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id)`
      yield* sql`CREATE INDEX deliveries_pending_idx ON deliveries (webhook_id, due_at, seq) WHERE status = 'pending'`
      yield* sql`CREATE INDEX deliveries_log_idx ON deliveries (workspace_id, webhook_id, id)`
      yield* sql`
        CREATE INDEX deliveries_replay_idx ON deliveries (webhook_id, event_created_at, seq) WHERE status <> 'pending'`
      yield* sql`
        CREATE INDEX deliveries_stats_idx ON deliveries (webhook_id, event_created_at)
        INCLUDE (workspace_id, status, latency_ms)`
      yield* sql`CREATE INDEX deliveries_held_idx ON deliveries (workspace_id, webhook_id) WHERE status = 'held'`
      // The oldest held delivery of a webhook, for when it expires (`oldestHeldExpiresAt`).
      yield* sql`CREATE INDEX deliveries_held_order_idx ON deliveries (webhook_id, id) WHERE status = 'held'`
    } else {
      yield* sql`ALTER TABLE alerts ADD CONSTRAINT alerts_pkey PRIMARY KEY (id)`
      yield* sql`CREATE INDEX alerts_workspace_idx ON alerts (workspace_id, id)`
    }
    yield* sql`
      ALTER TABLE ${sql(name)} ATTACH PARTITION ${sql(before)}
      FOR VALUES FROM (MINVALUE) TO (${sql.literal(`'${upTo}'`)})`
    yield* Effect.when(sql`ALTER TABLE ${sql(before)} DROP CONSTRAINT ${sql(TimeRanges.beforeCheck(table))}`, () =>
      Option.isSome(checked)
    )
  }
  // Retention and removal (`PgRetention`) keep a lease here, one run at a time over the database.
  yield* sql`
    CREATE TABLE retention_runs (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      owner text,
      lease_until bigint NOT NULL DEFAULT 0,
      last_run_at bigint
    )`
  yield* sql`INSERT INTO retention_runs DEFAULT VALUES`
})
