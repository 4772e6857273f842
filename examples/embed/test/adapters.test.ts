/**
 * src/adapters.ts on PostgreSQL (with DATABASE_URL): an event published through each query
 * builder's transaction commits with the host's own row, a rollback leaves neither, and a failure
 * inside the transaction comes back without the event's values. The Effect way too:
 * `HostTransaction.publishInWith` inside `sql.withTransaction`, and why a Promise executor needs the
 * transaction's runtime.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as HostTransaction from "@waybill/store-pg/HostTransaction"
import * as Testing from "@waybill/store-pg/Testing"
import { sql as drizzleSql } from "drizzle-orm"
import { drizzle } from "drizzle-orm/node-postgres"
import { Effect, Exit, ManagedRuntime, Redacted, Schema, Scope } from "effect"
import knex from "knex"
import { CompiledQuery, Kysely, PostgresDialect } from "kysely"
import * as Pg from "pg"
import { drizzleExecutor, effectSqlExecutor, knexExecutor, kyselyExecutor } from "../src/adapters.js"

const url = process.env.DATABASE_URL
const options = { schema: "waybill", workspaceId: Schema.decodeSync(WorkspaceId)("host-adapters") }

const publish = (executor: HostTransaction.Executor, tourId: string) =>
  Effect.runPromise(
    HostTransaction.publishIn(executor, options, { type: "tour-deleted", payload: { tourId }, orderingKey: tourId })
  ).then((event) => event.id)

// A host's transaction through one library: Waybill's executor, and the host's own statements.
interface Host {
  readonly name: string
  readonly transaction: <A>(
    work: (trx: {
      readonly executor: HostTransaction.Executor
      readonly run: (text: string) => Promise<unknown>
    }) => Promise<A>
  ) => Promise<A>
  readonly close: () => Promise<void>
}

const hosts = (database: string): ReadonlyArray<Host> => {
  const kysely = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new Pg.Pool({ connectionString: database, max: 2 }) })
  })
  const drizzlePool = new Pg.Pool({ connectionString: database, max: 2 })
  const drizzleDb = drizzle(drizzlePool)
  const knexDb = knex({ client: "pg", connection: database, pool: { min: 0, max: 2 } })
  const effect = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(database), maxConnections: 2 }))
  return [
    {
      name: "Kysely",
      transaction: (work) =>
        kysely
          .transaction()
          .execute((trx) =>
            work({ executor: kyselyExecutor(trx), run: (text) => trx.executeQuery(CompiledQuery.raw(text)) })
          ),
      close: () => kysely.destroy()
    },
    {
      name: "Drizzle",
      transaction: (work) =>
        drizzleDb.transaction((tx) =>
          work({ executor: drizzleExecutor(tx), run: (text) => tx.execute(drizzleSql.raw(text)) })
        ),
      close: () => drizzlePool.end()
    },
    {
      name: "Knex",
      transaction: (work) =>
        knexDb.transaction((trx) => work({ executor: knexExecutor(trx), run: (text) => trx.raw(text) })),
      close: () => knexDb.destroy()
    },
    {
      name: "@effect/sql (Promise executor)",
      transaction: (work) =>
        effect.runPromise(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql.withTransaction(
              Effect.flatMap(effectSqlExecutor, (executor) =>
                Effect.promise(() => work({ executor, run: (text) => Promise.resolve(executor.query(text, [])) }))
              )
            )
          )
        ),
      close: () => effect.dispose()
    }
  ]
}

if (url === undefined || url === "") {
  describe("adapters [postgres]", () => {
    it.skip("NOT RUN: DATABASE_URL is not set, so the adapters were not tried on PostgreSQL", () => {})
  })
} else {
  describe("adapters [postgres]", () => {
    const scope = Effect.runSync(Scope.make())
    let database = ""
    let admin: Pg.Pool
    let all: ReadonlyArray<Host> = []
    beforeAll(async () => {
      database = await Effect.runPromise(Scope.extend(Testing.migratedPostgresDatabase(url), scope))
      admin = new Pg.Pool({ connectionString: database, max: 1 })
      await admin.query("CREATE TABLE public.orders (id serial PRIMARY KEY, reference text NOT NULL)")
      all = hosts(database)
    }, 60_000)
    afterAll(async () => {
      for (const host of all) await host.close()
      await admin.end()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    })

    const stored = async (eventId: string, reference: string) => {
      const events = await admin.query("SELECT ordering_key FROM waybill.events WHERE id = $1", [eventId])
      const orders = await admin.query("SELECT 1 FROM public.orders WHERE reference = $1", [reference])
      return { event: events.rows[0]?.ordering_key ?? null, order: orders.rowCount === 1 }
    }

    for (const name of ["Kysely", "Drizzle", "Knex", "@effect/sql (Promise executor)"]) {
      const host = () => all.find((candidate) => candidate.name === name)!
      const reference = (what: string) => `${name}-${what}`.replace(/\W+/g, "-")

      it(`${name}: commit keeps the host's row and the event`, async () => {
        const order = reference("committed")
        const eventId = await host().transaction(async ({ executor, run }) => {
          await run(`INSERT INTO orders (reference) VALUES ('${order}')`)
          return publish(executor, order)
        })
        assert.deepStrictEqual(await stored(eventId, order), { event: order, order: true })
      })

      it(`${name}: rollback leaves neither`, async () => {
        const order = reference("rolled-back")
        let eventId = ""
        const outcome = await host()
          .transaction(async ({ executor, run }) => {
            await run(`INSERT INTO orders (reference) VALUES ('${order}')`)
            eventId = await publish(executor, order)
            throw new Error("the host changes its mind")
          })
          .then(
            () => "committed",
            () => "rolled back"
          )
        assert.strictEqual(outcome, "rolled back")
        assert.match(eventId, /^evt_/)
        assert.deepStrictEqual(await stored(eventId, order), { event: null, order: false })
      })

      it(`${name}: a failure in the transaction comes back as PostgreSQL's reason, without the values`, async () => {
        const secret = reference("a-value-of-the-host")
        let error: unknown
        // The transaction ends in a rollback either way; some libraries then reject, others do not.
        await host()
          .transaction(async ({ executor, run }) => {
            await run("SELECT 1/0").catch(() => undefined)
            error = await Effect.runPromise(
              Effect.flip(
                HostTransaction.publishIn(executor, options, { type: "tour-deleted", payload: { tourId: secret } })
              )
            )
          })
          .catch(() => undefined)
        assert.strictEqual((error as HostTransaction.HostTransactionError)._tag, "HostTransactionError")
        const message = (error as HostTransaction.HostTransactionError).message
        assert.include(message, "current transaction is aborted")
        assert.include(message, "[SQLSTATE 25P02]")
        assert.notInclude(message, secret)
      })
    }

    it("Effect: publishInWith in sql.withTransaction commits and rolls back with it", async () => {
      const program = (order: string, fail: boolean) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          let eventId = ""
          const exit = yield* sql
            .withTransaction(
              Effect.gen(function* () {
                yield* sql`INSERT INTO public.orders (reference) VALUES (${order})`
                eventId = (yield* HostTransaction.publishInWith(sql, options, {
                  type: "tour-deleted",
                  payload: { tourId: order },
                  orderingKey: order
                })).id
                if (fail) return yield* Effect.fail("the host changes its mind")
              })
            )
            .pipe(Effect.exit)
          return { eventId, committed: Exit.isSuccess(exit) }
        }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(database), maxConnections: 2 })))
      const committed = await Effect.runPromise(program("effect-committed", false))
      assert.isTrue(committed.committed)
      assert.deepStrictEqual(await stored(committed.eventId, "effect-committed"), {
        event: "effect-committed",
        order: true
      })
      const rolledBack = await Effect.runPromise(program("effect-rolled-back", true))
      assert.isFalse(rolledBack.committed)
      assert.deepStrictEqual(await stored(rolledBack.eventId, "effect-rolled-back"), { event: null, order: false })
    })

    it("Effect: an executor over Effect.runPromise(sql.unsafe(…)) runs outside the transaction", async () => {
      const eventId = await Effect.runPromise(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const outside: HostTransaction.Executor = {
            query: (text, values) => Effect.runPromise(sql.unsafe(text, values))
          }
          let id = ""
          yield* sql
            .withTransaction(
              Effect.gen(function* () {
                id = (yield* HostTransaction.publishIn(outside, options, {
                  type: "tour-deleted",
                  payload: { tourId: "escaped" },
                  orderingKey: "escaped"
                })).id
                return yield* Effect.fail("rolled back")
              })
            )
            .pipe(Effect.ignore)
          return id
        }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(database), maxConnections: 2 })))
      )
      // Committed on its own connection, whatever became of the transaction.
      assert.strictEqual((await stored(eventId, "none")).event, "escaped")
    })
  })
}
