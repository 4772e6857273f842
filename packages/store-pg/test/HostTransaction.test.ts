/**
 * `HostTransaction.publishIn` (contract §9): checks before any SQL, one statement, errors without
 * values, on a scripted executor; and on real PostgreSQL (with DATABASE_URL), a host's
 * node-postgres `Client` in its own transaction with its own `search_path`: commit, rollback, the
 * notification at COMMIT, a database without Waybill's schema.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Metrics from "@waybill/core/Metrics"
import * as TraceContext from "@waybill/core/TraceContext"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import { Dispatcher } from "@waybill/webhooks/Dispatcher"
import * as HttpSender from "@waybill/webhooks/HttpSender"
import * as Retention from "@waybill/webhooks/Retention"
import { WebhookService } from "@waybill/webhooks/WebhookService"
import { Cause, Context, Effect, Layer, Metric, Option, Redacted, Runtime, Schema, TestClock } from "effect"
import * as Pg from "pg"
import * as Database from "../src/Database.js"
import * as HostTransaction from "../src/HostTransaction.js"
import * as PgRetention from "../src/PgRetention.js"
import * as Testing from "../src/Testing.js"
import { webhookStack } from "./harness.js"

const workspaceId = Schema.decodeSync(WorkspaceId)("host-a")
const options = { schema: "waybill", workspaceId }
const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
const event = (tourId: string, extra: Record<string, unknown> = {}) => ({
  type: "tour-deleted",
  payload: { tourId },
  ...extra
})

// An executor that records what it is sent and answers as `answer` says.
const scripted = (answer: (text: string, values: Array<unknown>) => Promise<unknown> = async () => ({ rows: [] })) => {
  const calls: Array<{ readonly text: string; readonly values: Array<unknown> }> = []
  const executor: HostTransaction.Executor = {
    query: (text, values) => {
      calls.push({ text, values })
      return answer(text, values)
    }
  }
  return { calls, executor }
}

const failing = (error: unknown) => scripted(() => Promise.reject(error))

const published = Effect.map(
  Metric.value(Metric.tagged(Metrics.eventsPublished, "type", "tour-deleted")),
  (state) => state.count
)

describe("HostTransaction.publishIn", () => {
  it.effect("sends one statement, the same text every time, naming the schema and its channel", () =>
    Effect.gen(function* () {
      const { calls, executor } = scripted()
      const before = yield* published
      const first = yield* HostTransaction.publishIn(executor, options, event("t1", { orderingKey: "t1" }))
      const second = yield* HostTransaction.publishIn(executor, options, event("t2", { traceparent }))
      assert.strictEqual(calls.length, 2)
      assert.strictEqual(calls[0]!.text, calls[1]!.text)
      assert.include(calls[0]!.text, 'INSERT INTO "waybill".events')
      assert.include(calls[0]!.text, "pg_notify('waybill_events', pg_current_xact_id()::text)")
      assert.deepStrictEqual(calls[0]!.values, [
        first.id,
        "host-a",
        "tour-deleted",
        first.createdAt,
        first.body,
        first.traceparent,
        "t1"
      ])
      assert.deepStrictEqual(JSON.parse(first.body), {
        id: first.id,
        type: "tour-deleted",
        createdAt: first.createdAt,
        payload: { tourId: "t1" }
      })
      assert.isTrue(Option.isSome(TraceContext.parse(first.traceparent)), "a fresh trace without one")
      assert.deepStrictEqual([second.traceparent, second.orderingKey], [traceparent, null])
      assert.strictEqual((yield* published) - before, 2)
    })
  )

  it.effect("checks the event as POST /events does, and the schema's name, before sending anything", () =>
    Effect.gen(function* () {
      const { calls, executor } = scripted()
      const before = yield* published
      const invalid = yield* Effect.flip(
        HostTransaction.publishIn(executor, options, {
          type: "tour-deleted",
          payload: {},
          orderingKey: "",
          traceparent: "00-nope",
          extra: 1
        })
      )
      assert.strictEqual(invalid._tag, "ValidationError")
      assert.deepStrictEqual(
        invalid._tag === "ValidationError" ? invalid.issues.map((issue) => issue.path).sort() : [],
        ["extra", "orderingKey", "payload.tourId", "traceparent"]
      )
      for (const schema of ['waybill"; DROP TABLE orders; --', "Waybill", "pg_catalog"]) {
        const refused = yield* Effect.flip(HostTransaction.publishIn(executor, { schema, workspaceId }, event("t")))
        assert.strictEqual(refused._tag, "HostTransactionError")
        assert.include(refused.message, `Waybill schema "${schema}"`)
      }
      assert.strictEqual(calls.length, 0)
      assert.strictEqual((yield* published) - before, 0)
    })
  )

  it.effect("a database without the schema is an error naming it and how to get it", () =>
    Effect.gen(function* () {
      for (const code of ["42P01", "3F000"]) {
        const { executor } = failing(
          Object.assign(new Error('relation "waybill.events" does not exist'), { code, severity: "ERROR" })
        )
        const error = yield* Effect.flip(HostTransaction.publishIn(executor, options, event("t")))
        assert.strictEqual(error._tag, "HostTransactionError")
        assert.include(error.message, 'The database has no Waybill schema "waybill"')
        assert.include(error.message, "DATABASE_URL")
      }
    })
  )

  it.effect("other failures carry the database's message, never the statement's values", () =>
    Effect.gen(function* () {
      const secret = "a-payload-value-of-the-host"
      const aborted = "current transaction is aborted, commands ignored until end of transaction block"
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        // node-postgres and Kysely: the driver's error as it is.
        [Object.assign(new Error(aborted), { code: "25P02" }), `${aborted} [SQLSTATE 25P02]`],
        // Drizzle and @effect/sql: an error of their own, the driver's as its cause.
        [
          new Error(`Failed query: WITH inserted AS (...)\nparams: ${secret}`, {
            cause: Object.assign(new Error(aborted), { code: "25P02" })
          }),
          `${aborted} [SQLSTATE 25P02]`
        ],
        // Knex: the statement with its values written in front of the driver's message.
        [
          Object.assign(new Error(`WITH inserted AS (INSERT ... VALUES ('evt_1', '${secret} - x')) - ${aborted}`), {
            code: "25P02"
          }),
          `${aborted} [SQLSTATE 25P02]`
        ],
        // An executor over `Effect.runPromise`: the failure is in the FiberFailure's cause.
        [
          Runtime.makeFiberFailure(
            Cause.fail(
              new Error("Failed to execute statement", { cause: Object.assign(new Error(aborted), { code: "25P02" }) })
            )
          ),
          `${aborted} [SQLSTATE 25P02]`
        ],
        [new Error("Client was closed and is not queryable"), "Client was closed and is not queryable"],
        ["a thrown string", "a thrown string"]
      ]
      for (const [thrown, reason] of cases) {
        const error = yield* Effect.flip(HostTransaction.publishIn(failing(thrown).executor, options, event(secret)))
        assert.strictEqual(error._tag, "HostTransactionError")
        assert.strictEqual(error.message, `Publishing into Waybill schema "waybill" failed: ${reason}`)
        assert.notInclude(error.message, secret)
      }
    })
  )
})

// --- On PostgreSQL -------------------------------------------------------------------------------

class Databases extends Context.Tag("test/HostTransaction/Databases")<
  Databases,
  { readonly migrated: string; readonly bare: string }
>() {}

const connect = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Pg.Client({ connectionString: url })
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.end())
  )

// Notifications on `channel`, in the order they arrive.
const listener = (url: string, channel: string) =>
  Effect.gen(function* () {
    const client = yield* connect(url)
    const received: Array<string> = []
    const waiting: Array<(payload: string) => void> = []
    client.on("notification", (message) => {
      if (message.channel !== channel) return
      const waiter = waiting.shift()
      if (waiter === undefined) received.push(message.payload ?? "")
      else waiter(message.payload ?? "")
    })
    yield* Effect.promise(() => client.query(`LISTEN ${channel}`))
    return {
      // What has arrived by the end of a round trip on the listener's connection.
      arrived: Effect.promise(async () => {
        await client.query("SELECT 1")
        return [...received]
      }),
      // The next notification; a generous bound so a missing one fails instead of hanging.
      next: Effect.promise(
        () =>
          new Promise<string>((resolve, reject) => {
            const first = received.shift()
            if (first !== undefined) return resolve(first)
            const timer = setTimeout(() => reject(new Error(`no notification on ${channel}`)), 20_000)
            waiting.push((payload) => {
              clearTimeout(timer)
              resolve(payload)
            })
          })
      )
    }
  })

// A host's connection: its own table in public and public as its search_path.
const host = (url: string) =>
  Effect.gen(function* () {
    const client = yield* connect(url)
    yield* Effect.promise(async () => {
      await client.query("SET search_path TO public")
      await client.query("CREATE TABLE IF NOT EXISTS public.orders (id serial PRIMARY KEY, reference text NOT NULL)")
    })
    const query = <R extends Pg.QueryResultRow = Pg.QueryResultRow>(text: string, values: Array<unknown> = []) =>
      Effect.promise(() => client.query<R>(text, values))
    return { client, query }
  })

const url = process.env.DATABASE_URL

if (url === undefined || url === "") {
  describe("HostTransaction.publishIn [postgres]", () => {
    it.skip("NOT RUN: DATABASE_URL is not set, so the host's-transaction suite did not run", () => {})
  })
} else {
  // A host publishes into ranges Waybill made ahead (PgRetention): here up to past the tests' clock.
  const rangesUpTo = (migrated: string, now: number) =>
    Effect.flatMap(Retention.RetentionStore, (store) => store.prepare(now, Retention.defaultRetentionMs)).pipe(
      Effect.provide(
        PgRetention.layer.pipe(
          Layer.provide(Database.layer({ _tag: "Postgres", url: Redacted.make(migrated), maxConnections: 1 }))
        )
      )
    )
  const databases = Layer.scoped(
    Databases,
    Effect.all({ migrated: Testing.migratedPostgresDatabase(url), bare: Testing.freshPostgresDatabase(url) }).pipe(
      Effect.tap(({ migrated }) => rangesUpTo(migrated, 1_798_000_000_000))
    )
  )

  layer(databases, { timeout: "120 seconds" })("HostTransaction.publishIn [postgres]", (it) => {
    it.scoped("commit: the host's row and the event together, the notification only at COMMIT", () =>
      Effect.gen(function* () {
        const { migrated } = yield* Databases
        const { client, query } = yield* host(migrated)
        const notifications = yield* listener(migrated, "waybill_events")
        yield* query("BEGIN")
        yield* query("INSERT INTO orders (reference) VALUES ($1)", ["order-1"])
        const recorded = yield* HostTransaction.publishIn(
          client,
          options,
          event("tour_1", { orderingKey: "order-1", traceparent })
        )
        assert.deepStrictEqual(yield* notifications.arrived, [], "nothing before COMMIT")
        const [{ xid }] = (yield* query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid")).rows as [
          { xid: string }
        ]
        yield* query("COMMIT")
        assert.strictEqual(yield* notifications.next, xid)
        assert.deepStrictEqual((yield* query("SHOW search_path")).rows, [{ search_path: "public" }])
        const { rows } = yield* query(
          "SELECT workspace_id, type, created_at, body, traceparent, ordering_key, xid::text AS xid FROM waybill.events WHERE id = $1",
          [recorded.id]
        )
        assert.deepStrictEqual(rows, [
          {
            workspace_id: "host-a",
            type: "tour-deleted",
            created_at: String(recorded.createdAt),
            body: recorded.body,
            traceparent,
            ordering_key: "order-1",
            xid
          }
        ])
        assert.deepStrictEqual((yield* query("SELECT reference FROM orders")).rows, [{ reference: "order-1" }])
      })
    )

    it.scoped("the committed event is fanned out and delivered as POST /events' are, in its trace", () =>
      Effect.gen(function* () {
        const { migrated } = yield* Databases
        yield* TestClock.setTime(1_798_000_000_000)
        const engine = yield* Layer.build(
          webhookStack(HttpSender.layerScripted(() => Effect.succeed({ statusCode: 200 })))(
            Database.layer({ _tag: "Postgres", url: Redacted.make(migrated), maxConnections: 2 })
          )
        )
        yield* Effect.gen(function* () {
          yield* Effect.flatMap(WebhookService, (service) =>
            service.register({
              url: "https://hooks.example.org/host",
              events: ["tour-deleted"],
              auth: { type: "bearer", token: "host-token" }
            })
          ).pipe(Effect.provideService(CurrentWorkspace, { id: workspaceId, apiKeyId: "k" }))
          const { client, query } = yield* host(migrated)
          yield* query("BEGIN")
          const recorded = yield* HostTransaction.publishIn(client, options, event("tour_delivered", { traceparent }))
          yield* query("COMMIT")
          yield* Testing.eventsVisible
          const dispatcher = yield* Dispatcher
          yield* dispatcher.fanOutAll
          yield* dispatcher.deliverDue
          const sent = (yield* Effect.flatMap(HttpSender.SentRequests, (requests) => requests.all)).filter(
            (received) => received.request.headers["X-Event-Id"] === recorded.id
          )
          assert.strictEqual(sent.length, 1)
          assert.strictEqual(sent[0]!.request.body, recorded.body)
          assert.strictEqual(
            Option.getOrThrow(TraceContext.parse(sent[0]!.request.headers.traceparent)).traceId,
            "4bf92f3577b34da6a3ce929d0e0e4736"
          )
        }).pipe(Effect.provide(engine))
      })
    )

    it.scoped("rollback: no row and no notification", () =>
      Effect.gen(function* () {
        const { migrated } = yield* Databases
        const { client, query } = yield* host(migrated)
        const notifications = yield* listener(migrated, "waybill_events")
        yield* query("BEGIN")
        yield* query("INSERT INTO orders (reference) VALUES ('order-rolled-back')")
        const rolledBack = yield* HostTransaction.publishIn(client, options, event("tour_2"))
        yield* query("ROLLBACK")
        assert.deepStrictEqual((yield* query("SELECT id FROM waybill.events WHERE id = $1", [rolledBack.id])).rows, [])
        // Notifications arrive in commit order: the first one is the next commit's.
        yield* query("BEGIN")
        yield* HostTransaction.publishIn(client, options, event("tour_3"))
        const [{ xid }] = (yield* query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid")).rows as [
          { xid: string }
        ]
        yield* query("COMMIT")
        assert.strictEqual(yield* notifications.next, xid)
        assert.deepStrictEqual(
          (yield* query("SELECT reference FROM orders WHERE reference = 'order-rolled-back'")).rows,
          []
        )
      })
    )

    it.scoped("an invalid event sends nothing: the host's transaction goes on and commits", () =>
      Effect.gen(function* () {
        const { migrated } = yield* Databases
        const { client, query } = yield* host(migrated)
        let sent = 0
        const counting: HostTransaction.Executor = {
          query: (text, values) => {
            sent++
            return client.query(text, values)
          }
        }
        yield* query("BEGIN")
        yield* query("INSERT INTO orders (reference) VALUES ('order-kept')")
        const error = yield* Effect.flip(
          HostTransaction.publishIn(counting, options, event("tour_4", { orderingKey: "x".repeat(256) }))
        )
        assert.strictEqual(error._tag, "ValidationError")
        assert.strictEqual(sent, 0)
        yield* query("COMMIT")
        assert.deepStrictEqual((yield* query("SELECT reference FROM orders WHERE reference = 'order-kept'")).rows, [
          { reference: "order-kept" }
        ])
      })
    )

    it.scoped("a database without Waybill's schema, or another schema's name: an error naming the schema", () =>
      Effect.gen(function* () {
        const { bare, migrated } = yield* Databases
        for (const [database, schema] of [
          [bare, "waybill"],
          [migrated, "waybill_elsewhere"]
        ] as const) {
          const { client, query } = yield* host(database)
          yield* query("BEGIN")
          const error = yield* Effect.flip(HostTransaction.publishIn(client, { schema, workspaceId }, event("tour_5")))
          yield* query("ROLLBACK")
          assert.strictEqual(error._tag, "HostTransactionError")
          assert.include(error.message, `The database has no Waybill schema "${schema}"`)
          assert.deepStrictEqual((yield* query("SHOW search_path")).rows, [{ search_path: "public" }])
        }
      })
    )
  })
}
