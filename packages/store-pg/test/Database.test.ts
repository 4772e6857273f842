import { join } from "node:path"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { assert, it } from "@effect/vitest"
import * as Transactor from "@waybill/core/Transactor"
import * as OutboxReader from "@waybill/webhooks/OutboxReader"
import { Context, Effect, Exit, Fiber, Layer, Option, Queue, Redacted, Stream } from "effect"
import * as Database from "../src/Database.js"
import { MAX_PREPARED_PER_CONNECTION } from "../src/internal/preparedStatements.js"
import * as Migrations from "../src/Migrations.js"
import * as PgEventOutbox from "../src/PgEventOutbox.js"
import * as StoreOutboxReader from "../src/PgOutboxReader.js"
import * as Testing from "../src/Testing.js"
import { forEachBackend } from "./harness.js"

forEachBackend(
  "Database",
  (database) => database,
  (it) => {
    it.effect("applies every migration once", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const applied = yield* sql<{ name: string }>`SELECT name FROM ${sql(Migrations.table)} ORDER BY migration_id`
        assert.deepStrictEqual(
          applied.map((row) => row.name),
          Object.keys(Migrations.migrations).map((key) => key.slice(5))
        )
        const again = yield* Migrations.run
        assert.deepStrictEqual(again, [])
      })
    )

    it.effect("parses int8 as numbers", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ value: number }>`SELECT 1798761600::bigint AS value`
        assert.strictEqual(rows[0]!.value, 1798761600)
      })
    )

    it.effect("commits and rolls back through the Transactor port", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* Transactor.withTransaction(sql`INSERT INTO workspaces (id, created_at) VALUES ('tx-commit', 1)`)
        const failed = yield* Transactor.withTransaction(
          Effect.zipRight(sql`INSERT INTO workspaces (id, created_at) VALUES ('tx-rollback', 1)`, Effect.fail("boom"))
        ).pipe(Effect.exit)
        assert.isTrue(Exit.isFailure(failed))
        const rows = yield* sql<{ id: string }>`SELECT id FROM workspaces WHERE id LIKE 'tx-%' ORDER BY id`
        assert.deepStrictEqual(
          rows.map((row) => row.id),
          ["tx-commit"]
        )
      })
    )

    it.effect("serves concurrent queries and transactions", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const results = yield* Effect.forEach(
          Array.from({ length: 40 }, (_, i) => i),
          (i) =>
            i % 4 === 0
              ? Transactor.withTransaction(
                  Effect.zipRight(
                    sql`INSERT INTO workspaces (id, created_at) VALUES (${`conc-${i}`}, ${i})`,
                    Effect.map(sql<{ n: number }>`SELECT ${i}::int AS n`, (rows) => rows[0]!.n)
                  )
                )
              : Effect.map(sql<{ n: number }>`SELECT ${i}::int AS n`, (rows) => rows[0]!.n),
          { concurrency: 16 }
        )
        assert.deepStrictEqual(
          results,
          Array.from({ length: 40 }, (_, i) => i)
        )
        const inserted = yield* sql<{
          count: number
        }>`SELECT count(*)::int AS count FROM workspaces WHERE id LIKE 'conc-%'`
        assert.strictEqual(inserted[0]!.count, 10)
      })
    )
  }
)

it.live(
  "the embedded database keeps its data across restarts of the same data directory",
  () =>
    Effect.gen(function* () {
      // A copy of the run's migrated database (PGlite's initdb would hold the worker for seconds;
      // the first start is the schema suite's and the process tests').
      const directory = yield* Testing.scopedDataDir("waybill-data-")
      const embedded = Database.layer({ _tag: "Embedded", dataDir: join(directory, "pglite") })
      const write = Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`INSERT INTO workspaces (id, created_at) VALUES ('kept', 42)`
      )
      const read = Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ created_at: number }>`SELECT created_at FROM workspaces WHERE id = 'kept'`
      )
      yield* write.pipe(Effect.provide(Layer.fresh(embedded)))
      const rows = yield* read.pipe(Effect.provide(Layer.fresh(embedded)))
      assert.deepStrictEqual(
        rows.map((row) => row.created_at),
        [42]
      )
    }).pipe(Effect.scoped),
  120_000
)

it.live.skipIf(!process.env.DATABASE_URL)(
  "upgrading to the outbox position: events fanned out before stay behind it, pending ones are read, in order",
  () =>
    Effect.gen(function* () {
      const url = yield* Testing.freshPostgresDatabase(process.env.DATABASE_URL!)
      const sql = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
      const upTo = (last: string) =>
        Migrator.make({})({
          loader: Migrator.fromRecord(
            Object.fromEntries(Object.entries(Migrations.migrations).filter(([key]) => key <= last))
          ),
          table: Migrations.table
        }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      yield* upTo("0005_delivery_fillfactor")
      yield* sql`
        INSERT INTO events (id, workspace_id, type, created_at, body, fanned_out_at) VALUES
          ('evt_00000000010000000000000001', 'ws', 'tour-created', 1, '{}', 2),
          ('evt_00000000010000000000000002', 'ws', 'tour-created', 1, '{}', NULL),
          ('evt_00000000010000000000000003', 'ws', 'tour-created', 1, '{}', 2),
          ('evt_00000000010000000000000004', 'ws', 'tour-created', 1, '{}', NULL)`
      yield* upTo("9999")
      const reader = yield* OutboxReader.OutboxReader.pipe(
        Effect.provide(StoreOutboxReader.layer),
        Effect.provideService(SqlClient.SqlClient, sql)
      )
      // Behind the cluster-wide horizon first: another suite's open transaction may hold them back.
      yield* Testing.eventsVisible.pipe(Effect.provideService(SqlClient.SqlClient, sql))
      const position = yield* reader.acquire("upgrade", 0, 1)
      const { events } = yield* reader.read(Option.getOrThrow(position), 10)
      assert.deepStrictEqual(
        events.map((event) => event.id),
        ["evt_00000000010000000000000002", "evt_00000000010000000000000004"]
      )
    }).pipe(Effect.scoped, Effect.provide(Reactivity.layer)),
  120_000
)

it.live.skipIf(!process.env.DATABASE_URL)(
  "on PostgreSQL, a statement with parameters is prepared once per connection and reused; at most a bounded number are kept",
  () =>
    Effect.gen(function* () {
      const url = yield* Testing.freshPostgresDatabase(process.env.DATABASE_URL!)
      const context = yield* Layer.build(
        Database.layer({ _tag: "Postgres", url: Redacted.make(url), maxConnections: 1 })
      )
      const sql = Context.get(context, SqlClient.SqlClient)
      const prepared = sql<{ name: string; statement: string; calls: number }>`
        SELECT name, statement, generic_plans + custom_plans AS calls FROM pg_prepared_statements ORDER BY name`
      const before = (yield* prepared).length
      for (let i = 0; i < 3; i++) {
        const rows = yield* sql<{ value: number }>`SELECT ${i}::int + 1 AS value`
        assert.strictEqual(rows[0]!.value, i + 1)
      }
      const once = (yield* prepared).filter((row) => row.statement.includes("+ 1 AS value"))
      assert.strictEqual(once.length, 1)
      assert.strictEqual(once[0]!.calls, 3)
      // Texts that vary stop being prepared at the bound, and still run.
      for (let i = 0; i < MAX_PREPARED_PER_CONNECTION + 5; i++) {
        const rows = yield* sql.unsafe<{ value: number }>(`SELECT $1::int + ${i} AS value`, [1])
        assert.strictEqual(rows[0]!.value, i + 1)
      }
      assert.strictEqual((yield* prepared).length, MAX_PREPARED_PER_CONNECTION)
      assert.isAbove(MAX_PREPARED_PER_CONNECTION, before + 1)
    }).pipe(Effect.scoped),
  120_000
)

it.live.skipIf(!process.env.DATABASE_URL)(
  "on PostgreSQL, listen hears the outbox's notifications (empty ones) and fails once its connection is lost",
  () =>
    Effect.gen(function* () {
      const url = yield* Testing.freshPostgresDatabase(process.env.DATABASE_URL!)
      const context = yield* Layer.build(
        Database.layer({ _tag: "Postgres", url: Redacted.make(url), maxConnections: 2 })
      )
      const pg = Context.get(context, PgClient.PgClient)
      const heard = yield* Queue.unbounded<string>()
      const listening = yield* Context.get(context, Database.Notifications)
        .listen(PgEventOutbox.channel)
        .pipe(
          Stream.runForEach((payload) => Queue.offer(heard, payload)),
          Effect.exit,
          Effect.fork
        )
      // Until the LISTEN is in place, notifications are sent again.
      let payload: Option.Option<string> = Option.none()
      for (let tries = 0; tries < 25 && Option.isNone(payload); tries++) {
        yield* pg`SELECT pg_notify(${PgEventOutbox.channel}, '')`
        payload = yield* Queue.take(heard).pipe(Effect.timeoutOption("200 millis"))
      }
      assert.deepStrictEqual(payload, Option.some(""), "a notification heard within 5 s")
      // PostgreSQL ends the listening connection (as a restart does): the stream fails.
      yield* pg`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`
      const ended = yield* Fiber.join(listening).pipe(Effect.timeoutOption("10 seconds"))
      assert.isTrue(Option.isSome(ended) && Exit.isFailure(ended.value), "the stream failed")
    }).pipe(Effect.scoped),
  60_000
)
