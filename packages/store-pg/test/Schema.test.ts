/**
 * Waybill's schema of its own, on PGlite and on PostgreSQL: where the tables go, what a host's
 * database keeps, how an installation of the time before the schema moves, and what a failed
 * migration says.
 */
import { cp, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { PGlite } from "@electric-sql/pglite"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as OutboxTag from "@waybill/events/EventOutbox"
import { Context, Effect, Layer, Logger, Option, Redacted, Schema, type Scope, Stream } from "effect"
import * as Database from "../src/Database.js"
import * as Embedded from "../src/internal/embedded.js"
import * as Migrations from "../src/Migrations.js"
import * as PgEventOutbox from "../src/PgEventOutbox.js"
import * as Testing from "../src/Testing.js"

const waybillTables = [
  "alerts",
  "api_keys",
  "console_tokens",
  "deliveries",
  "delivery_hours",
  "drafts",
  "events",
  "fan_out",
  "idempotency_keys",
  "retention_runs",
  "tours",
  "waybill_migrations",
  "webhook_changes",
  "webhook_flow",
  "webhooks",
  "workspaces"
]

/**
 * A database on one back end that a test opens as a plain client (`search_path` `public`, as a
 * host's connection or the code before the schema had it) and as Waybill, one after the other.
 */
interface Target {
  readonly withRaw: <A, E>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) => Effect.Effect<A, unknown>
  readonly config: (schema?: string) => Database.DatabaseConfig
}

const plainClient = (options: PgClient.PgClientConfig) =>
  PgClient.make({ ...options, maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer))

// An empty PGlite data directory, made once for the file (PGlite's initdb is its slow part) and
// copied into a directory of each test's.
let blank: Promise<string> | undefined
const blankDataDir = () => {
  blank ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), "waybill-blank-"))
    const db = new PGlite(dir)
    await db.waitReady
    await db.close()
    return dir
  })()
  return blank
}
afterAll(async () => {
  if (blank !== undefined) await rm(await blank, { recursive: true, force: true })
})

const targets: ReadonlyArray<{ readonly name: string; readonly make: Effect.Effect<Target, unknown, Scope.Scope> }> = [
  {
    name: "pglite",
    make: Effect.gen(function* () {
      const dataDir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "waybill-schema-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      )
      const template = yield* Effect.promise(blankDataDir)
      yield* Effect.promise(() => cp(template, dataDir, { recursive: true }))
      return {
        // One process at a time on a data directory: the plain client is closed before Waybill opens it.
        withRaw: (use) =>
          Effect.scoped(
            Effect.gen(function* () {
              const embedded = yield* Embedded.acquire(dataDir, { searchPath: "public" })
              return yield* use(
                yield* plainClient({ host: embedded.socketDir, port: Embedded.SOCKET_PORT, username: "postgres" })
              )
            })
          ),
        config: (schema) => ({ _tag: "Embedded", dataDir, schema })
      } satisfies Target
    })
  },
  ...(process.env.DATABASE_URL
    ? [
        {
          name: "postgres",
          make: Effect.gen(function* () {
            const url = yield* Testing.freshPostgresDatabase(process.env.DATABASE_URL!)
            return {
              withRaw: (use) => Effect.scoped(Effect.flatMap(plainClient({ url: Redacted.make(url) }), use)),
              config: (schema) => ({ _tag: "Postgres", url: Redacted.make(url), maxConnections: 3, schema })
            } satisfies Target
          })
        }
      ]
    : [])
]

const relations = (sql: SqlClient.SqlClient, schema: string) =>
  Effect.map(
    sql<{ name: string; kind: string }>`
      SELECT c.relname AS name, c.relkind::text AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ${schema} AND NOT c.relispartition ORDER BY c.relname`,
    (rows) => rows.map((row) => `${row.kind}:${row.name}`)
  )
const tablesOf = (sql: SqlClient.SqlClient, schema: string) =>
  Effect.map(relations(sql, schema), (rows) =>
    rows.filter((row) => row.startsWith("r:") || row.startsWith("p:")).map((row) => row.slice(2))
  )

/** Opens Waybill on a configuration, runs `use` with its SqlClient, closes it. */
const withWaybill = <A, E>(config: Database.DatabaseConfig, use: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.scoped(
    Effect.flatMap(Layer.build(Database.layer(config)), (context) => use(Context.get(context, SqlClient.SqlClient)))
  )

// The migrations as the code before the schema ran them: with the connection's search_path,
// which is public.
// The layout of an installation made before the schema: the migrations up to 0008, in `public`.
const publicLayout = Migrator.make({})({
  loader: Migrator.fromRecord(
    Object.fromEntries(Object.entries(Migrations.migrations).filter(([name]) => Number(name.slice(0, 4)) <= 8))
  ),
  table: Migrations.table
})
const publicLayoutTables = waybillTables.filter(
  (table) =>
    table !== "idempotency_keys" &&
    table !== "webhook_flow" &&
    table !== "console_tokens" &&
    table !== "retention_runs" &&
    table !== "delivery_hours" &&
    table !== "webhook_changes"
)

const counts = (sql: SqlClient.SqlClient, schema: string, tables: ReadonlyArray<string> = publicLayoutTables) =>
  Effect.forEach(
    tables,
    (table) =>
      Effect.map(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(schema)}.${sql(table)}`,
        (rows) => [table, rows[0]!.n] as const
      ),
    { concurrency: 1 }
  )

for (const target of targets) {
  describe(`Waybill's schema [${target.name}]`, () => {
    it.live(
      "every table, sequence and index, and the migrations' bookkeeping, is in schema waybill; every connection reads it",
      () =>
        Effect.gen(function* () {
          const { withRaw, config } = yield* target.make
          yield* withWaybill(config(), (sql) =>
            Effect.gen(function* () {
              assert.deepStrictEqual(yield* tablesOf(sql, "waybill"), waybillTables)
              const all = yield* relations(sql, "waybill")
              assert.isTrue(all.includes("S:events_seq"), all.join(" "))
              // Kept by time ranges (0018): the table and its indexes are partitioned ones.
              assert.isTrue(all.includes("p:deliveries") && all.includes("I:deliveries_pending_idx"), all.join(" "))
              // Every connection of the pool at once, each in a transaction of its own.
              const paths = yield* Effect.all(
                Array.from({ length: 3 }, () =>
                  sql.withTransaction(
                    Effect.zipLeft(
                      sql<{ path: string; schema: string }>`
                        SELECT current_setting('search_path') AS path, current_schema() AS schema`,
                      sql`SELECT pg_sleep(0.05)`
                    )
                  )
                ),
                { concurrency: "unbounded" }
              )
              for (const [row] of paths) assert.deepStrictEqual(row, { path: "waybill", schema: "waybill" })
            })
          )
          yield* withRaw((sql) => Effect.map(relations(sql, "public"), (found) => assert.deepStrictEqual(found, [])))
        }).pipe(Effect.scoped),
      120_000
    )

    it.live(
      "a host's own events and webhooks tables in public are left as they were, rows and columns",
      () =>
        Effect.gen(function* () {
          const { withRaw, config } = yield* target.make
          const look = (host: SqlClient.SqlClient) =>
            Effect.all({
              columns: host`
                SELECT table_name, column_name, data_type FROM information_schema.columns
                WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
              relations: relations(host, "public"),
              events: host`SELECT id, title, starts_on::text AS starts_on FROM events ORDER BY id`,
              webhooks: host`SELECT url, active FROM webhooks`,
              searchPath: host`SHOW search_path`
            })
          const before = yield* withRaw((host) =>
            Effect.gen(function* () {
              yield* host`CREATE TABLE events (id serial PRIMARY KEY, title text NOT NULL, starts_on date)`
              yield* host`CREATE TABLE webhooks (url text PRIMARY KEY, active boolean NOT NULL)`
              yield* host`INSERT INTO events (title, starts_on) VALUES ('launch', '2027-01-04'), ('retro', NULL)`
              yield* host`INSERT INTO webhooks VALUES ('https://host.example/hook', true)`
              return yield* look(host)
            })
          )
          assert.strictEqual(before.events.length, 2)
          yield* withWaybill(config(), (sql) =>
            Effect.gen(function* () {
              // Waybill's events are its own, beside the host's.
              yield* sql`INSERT INTO events (id, workspace_id, type, created_at, body) VALUES ('evt_00000000010000000000000001', 'ws', 'tour-created', 1, '{}')`
              assert.deepStrictEqual(yield* sql`SELECT id FROM events`, [{ id: "evt_00000000010000000000000001" }])
            })
          )
          assert.deepStrictEqual(yield* withRaw(look), before)
        }).pipe(Effect.scoped),
      120_000
    )

    it.live(
      "an installation made before the schema (its tables in public) moves into it without losing a row",
      () =>
        Effect.gen(function* () {
          const { withRaw, config } = yield* target.make
          const before = yield* withRaw((old) =>
            Effect.gen(function* () {
              yield* publicLayout.pipe(Effect.provideService(SqlClient.SqlClient, old))
              assert.deepStrictEqual(yield* tablesOf(old, "public"), publicLayoutTables)
              // A row in every table (the fan-out position has its own), and a table of the host's.
              yield* old`INSERT INTO workspaces VALUES ('ws-a', 1), ('ws-b', 2)`
              yield* old`INSERT INTO api_keys VALUES ('key_1', 'ws-a', 'hash', 1, NULL)`
              yield* old`INSERT INTO drafts VALUES ('ws-a', 'drf_1', 'draft', '{"id":"drf_1"}', false, NULL, NULL, 1, 1)`
              yield* old`INSERT INTO events (id, workspace_id, type, created_at, body) VALUES
                           ('evt_00000000010000000000000001', 'ws-a', 'tour-created', 1, '{"n":1}'), ('evt_00000000020000000000000002', 'ws-a', 'tour-created', 2, '{"n":2}')`
              yield* old`INSERT INTO tours VALUES ('ws-a', 'tour_1', 'drf_1', 10, 1, '{"id":"tour_1"}')`
              yield* old`INSERT INTO webhooks (workspace_id, id, events, document, created_at) VALUES
                           ('ws-a', 'whk_1', ARRAY['tour-created'], '{"id":"whk_1"}', 1)`
              yield* old`INSERT INTO deliveries (id, workspace_id, webhook_id, event_id, event_type, created_at, status, due_at, event_created_at)
                           VALUES ('dlv_00000000010000000000000001', 'ws-a', 'whk_1', 'evt_00000000010000000000000001', 'tour-created', 1, 'succeeded', 1, 1)`
              yield* old`INSERT INTO alerts VALUES ('alr_00000000010000000000000001', 'ws-a', 'whk_1', 'dlv_00000000010000000000000001', 'evt_00000000010000000000000001', 'tour-created', 'http', 1)`
              yield* old`CREATE TABLE orders (id int PRIMARY KEY)`
              yield* old`INSERT INTO orders VALUES (7)`
              return yield* counts(old, "public")
            })
          )
          assert.isTrue(
            before.every(([, n]) => n > 0),
            JSON.stringify(before)
          )
          // What the move logs, start by start (kept off the run's console).
          const logged: Array<Array<string>> = []
          for (const start of [1, 2]) {
            const messages: Array<string> = []
            logged.push(messages)
            const capture = Logger.replace(
              Logger.defaultLogger,
              Logger.make(({ message }) => messages.push(String(message)))
            )
            yield* withWaybill(config(), (sql) =>
              Effect.gen(function* () {
                // Every row kept; the bookkeeping has gained the migrations made after the move.
                const expected = before.map(
                  ([table, n]) =>
                    [table, table === Migrations.table ? Object.keys(Migrations.migrations).length : n] as const
                )
                assert.deepStrictEqual(yield* counts(sql, "waybill"), expected, `start ${start}`)
                assert.deepStrictEqual(yield* tablesOf(sql, "public"), ["orders"])
                // The sequence keeps counting above the rows it numbered (PostgreSQL may skip a few).
                const id = `evt_0000000003000000000000000${start}`
                yield* sql`INSERT INTO events (id, workspace_id, type, created_at, body) VALUES (${id}, 'ws-a', 'tour-created', 3, '{}')`
                const [last] = yield* sql<{ seq: number }>`SELECT seq FROM events WHERE id = ${id}`
                assert.isAbove(last!.seq, 2)
                yield* sql`DELETE FROM events WHERE id = ${id}`
                assert.deepStrictEqual(yield* sql`SELECT document::text AS document FROM drafts WHERE id = 'drf_1'`, [
                  { document: '{"id":"drf_1"}' }
                ])
              })
            ).pipe(Effect.provide(capture))
          }
          // The move says so once, naming what it moved.
          assert.deepStrictEqual(logged, [
            [
              `Moved Waybill's ${publicLayoutTables.length - 1} tables and ${Migrations.table} from public into schema waybill`
            ],
            []
          ])
          yield* withRaw((old) =>
            Effect.map(old`SELECT id FROM orders`, (rows) => assert.deepStrictEqual(rows, [{ id: 7 }]))
          )
        }).pipe(Effect.scoped),
      120_000
    )

    it.live(
      "another schema, by configuration: the tables go there and the default one is not made",
      () =>
        Effect.gen(function* () {
          const { config } = yield* target.make
          yield* withWaybill(config("tenant_one"), (sql) =>
            Effect.gen(function* () {
              assert.deepStrictEqual(yield* tablesOf(sql, "tenant_one"), waybillTables)
              assert.deepStrictEqual(yield* sql`SELECT current_schema() AS s`, [{ s: "tenant_one" }])
              assert.deepStrictEqual(yield* sql`SELECT nspname FROM pg_namespace WHERE nspname = 'waybill'`, [])
            })
          )
        }).pipe(Effect.scoped),
      120_000
    )

    it.live(
      "a failed migration names the migration, the statement and PostgreSQL's reason, and leaves nothing half-done",
      () =>
        Effect.gen(function* () {
          const { withRaw, config } = yield* target.make
          // A table of that name already in Waybill's schema (made by hand, say).
          yield* withRaw((host) =>
            Effect.zipRight(host`CREATE SCHEMA waybill`, host`CREATE TABLE waybill.drafts (id text)`)
          )
          const error = yield* Effect.flip(withWaybill(config(), () => Effect.void))
          assert.instanceOf(error, Migrator.MigrationError)
          assert.match(
            error.message,
            /^Migration "2_drafts_and_events" failed at statement `CREATE TABLE drafts \( workspace_id text NOT NULL, .*`: relation "drafts" already exists \[SQLSTATE 42P07\]$/
          )
          // The first migration was rolled back with the second: nothing but the hand-made table.
          const left = yield* withRaw((host) => tablesOf(host, "waybill"))
          assert.deepStrictEqual(left, ["drafts"])
        }).pipe(Effect.scoped),
      120_000
    )

    it.live(
      "Migrations.run over a host's connection migrates into the schema and leaves the connection's search_path as it was",
      () =>
        Effect.gen(function* () {
          const { withRaw } = yield* target.make
          yield* withRaw((host) =>
            Effect.gen(function* () {
              const searchPath = yield* host`SHOW search_path`
              const applied = yield* Migrations.run.pipe(Effect.provideService(SqlClient.SqlClient, host))
              assert.strictEqual(applied.length, Object.keys(Migrations.migrations).length)
              assert.deepStrictEqual(yield* tablesOf(host, "waybill"), waybillTables)
              assert.deepStrictEqual(yield* relations(host, "public"), [])
              assert.deepStrictEqual(yield* host`SHOW search_path`, searchPath)
            })
          )
        }).pipe(Effect.scoped),
      120_000
    )
  })
}

describe("Waybill's schema: names", () => {
  it("a schema name must be a plain lower-case identifier that is not a system schema", () => {
    for (const good of ["waybill", "tenant_1", "_x", "a".repeat(56)]) {
      assert.isTrue(Option.isNone(Migrations.schemaProblem(good)), good)
    }
    for (const bad of [
      "",
      "Waybill",
      "1st",
      "way-bill",
      "way bill",
      'x"; DROP',
      "pg_waybill",
      "information_schema",
      "a".repeat(57)
    ]) {
      assert.isTrue(Option.isSome(Migrations.schemaProblem(bad)), bad)
    }
  })

  it.live("the database layer refuses a bad name before opening anything", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        withWaybill({ _tag: "Embedded", dataDir: "memory://", schema: "Bad-Name" }, () => Effect.void)
      )
      assert.instanceOf(error, Migrator.MigrationError)
      assert.strictEqual(
        error.message,
        "schema Bad-Name: must be a lower-case PostgreSQL identifier: letters a-z, digits and _, not starting with a digit"
      )
    })
  )
})

it.live.skipIf(!process.env.DATABASE_URL)(
  "on PostgreSQL, each schema notifies on a channel of its own: two installations in one database do not wake each other",
  () =>
    Effect.gen(function* () {
      const url = yield* Testing.freshPostgresDatabase(process.env.DATABASE_URL!)
      const open = (schema: string) =>
        Layer.build(
          PgEventOutbox.layer.pipe(
            Layer.provideMerge(Database.layer({ _tag: "Postgres", url: Redacted.make(url), maxConnections: 2, schema }))
          )
        )
      const a = yield* open("tenant_a")
      const b = yield* open("tenant_b")
      const heard = { tenant_a: 0, tenant_b: 0 }
      for (const [schema, context] of [
        ["tenant_a", a],
        ["tenant_b", b]
      ] as const) {
        yield* Context.get(context, Database.Notifications)
          .listen(PgEventOutbox.channelOf(schema))
          .pipe(
            Stream.runForEach(() => Effect.sync(() => heard[schema]++)),
            Effect.forkScoped
          )
      }
      const outbox = Context.get(a, OutboxTag.EventOutbox)
      const workspace = Schema.decodeSync(WorkspaceId)("ws-a")
      // Until both LISTENs are in place, events are published again.
      for (let tries = 0; tries < 50 && heard.tenant_a === 0; tries++) {
        yield* outbox.publish(workspace, [{ type: "tour-created", payload: { tour: { id: "tour_1" } } }])
        yield* Effect.sleep("100 millis")
      }
      yield* Effect.sleep("300 millis")
      assert.isAbove(heard.tenant_a, 0)
      assert.strictEqual(heard.tenant_b, 0)
      const sqlB = Context.get(b, SqlClient.SqlClient)
      assert.deepStrictEqual(yield* sqlB`SELECT count(*)::int AS n FROM events`, [{ n: 0 }])
    }).pipe(Effect.scoped),
  60_000
)
