/**
 * `forWorkspace(id).events.publishIn` end to end on PostgreSQL: a host's own transaction on its own
 * node-postgres connection writes its row and a Waybill event; the webhook gets the event once
 * after COMMIT, never after ROLLBACK, not before a long transaction ends; a second process
 * shares the work without sending anything twice.
 */
import { assert, describe, it } from "@effect/vitest"
import { isWaybillError, type WaybillError } from "@waybill/http/WaybillError"
import * as Waybill from "@waybill/server/Waybill"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect } from "effect"
import pg from "pg"
import { runLogFormat } from "./json-logs.js"
import { eventually, type Receiver, receiver } from "./receivers.js"
import { processKey, serverProcess } from "./server-process.js"

const url = process.env.DATABASE_URL
const key = "publish-in-key-0001"
const secretKey = "ef".repeat(32)

const tour = (id: string) => ({
  type: "tour-created",
  payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
})

/** Waybill in this process on `databaseUrl`, a host pool beside it with its own `orders` table. */
const embedded = (databaseUrl: string, apiKeys = `acme:${key}`) =>
  Effect.gen(function* () {
    const waybill = yield* Effect.acquireRelease(
      Effect.promise(() =>
        Waybill.make({
          env: {
            DATABASE_URL: databaseUrl,
            WAYBILL_SECRET_KEY: secretKey,
            WAYBILL_API_KEYS: apiKeys,
            WAYBILL_ALLOW_PRIVATE_TARGETS: "true",
            WAYBILL_LOG_LEVEL: "warn",
            ...runLogFormat
          }
        })
      ),
      (waybill) => Effect.promise(() => waybill.close())
    )
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => new pg.Pool({ connectionString: databaseUrl, max: 4 })),
      (pool) => Effect.promise(() => pool.end())
    )
    yield* Effect.promise(() =>
      pool.query("CREATE TABLE IF NOT EXISTS public.orders (id text PRIMARY KEY, event_id text)")
    )
    return { waybill, acme: waybill.forWorkspace("acme"), pool }
  })

/** A connection of the host's, checked out for the scope. */
const connection = (pool: pg.Pool) =>
  Effect.acquireRelease(
    Effect.promise(() => pool.connect()),
    (client) => Effect.sync(() => client.release())
  )

const query = (client: pg.ClientBase | pg.Pool, text: string, values: Array<unknown> = []) =>
  Effect.promise(() => client.query(text, values))

const subscribe = (acme: Waybill.WorkspaceApi, target: Receiver) =>
  Effect.promise(() =>
    acme.webhooks.create({
      url: target.url,
      events: ["tour-created"],
      auth: { type: "bearer", token: "receiver-token-0001" }
    })
  )

const refusal = (promise: Promise<unknown>) =>
  Effect.promise(() =>
    promise.then(
      () => assert.fail("expected a refusal"),
      (error: unknown) => {
        assert.isTrue(isWaybillError(error), String(error))
        return error as WaybillError
      }
    )
  )

const eventIds = (received: Receiver["received"]) => received.map((request) => request.headers["x-event-id"] as string)

describe.skipIf(url === undefined || url === "")("publishIn on PostgreSQL", () => {
  it.scopedLive(
    "COMMIT delivers the event once; ROLLBACK leaves nothing; a refused event leaves the transaction usable",
    () =>
      Effect.gen(function* () {
        const { acme, pool } = yield* embedded(yield* Testing.freshPostgresDatabase(url!))
        const target = yield* receiver()
        yield* subscribe(acme, target)
        const client = yield* connection(pool)
        // The host's own search_path, which publishIn neither needs nor changes.
        yield* query(client, "SET search_path TO public")

        yield* query(client, "BEGIN")
        yield* query(client, "INSERT INTO orders (id) VALUES ('o1')")
        const committed = yield* Effect.promise(() =>
          acme.events.publishIn(client, { ...tour("o1"), orderingKey: "o1" })
        )
        yield* query(client, "UPDATE orders SET event_id = $1 WHERE id = 'o1'", [committed.id])
        yield* query(client, "COMMIT")
        yield* eventually(
          Effect.sync(() => target.for(committed.id).length === 1),
          "the committed event"
        )

        yield* query(client, "BEGIN")
        yield* query(client, "INSERT INTO orders (id) VALUES ('o2')")
        const rolledBack = yield* Effect.promise(() => acme.events.publishIn(client, tour("o2")))
        yield* query(client, "ROLLBACK")

        yield* query(client, "BEGIN")
        yield* query(client, "INSERT INTO orders (id) VALUES ('o3')")
        const refused = yield* refusal(acme.events.publishIn(client, { type: "tour-created", payload: { tour: {} } }))
        assert.strictEqual(refused.status, 400)
        assert.deepStrictEqual(
          refused.issues.map((issue) => issue.path),
          ["payload.tour.id", "payload.tour.status"]
        )
        // The transaction goes on: the host decides what a refused event means for its write.
        const after = yield* Effect.promise(() => acme.events.publishIn(client, tour("o3")))
        yield* query(client, "COMMIT")

        // A later event arrives; the rolled-back one never does, nor is it stored.
        yield* eventually(
          Effect.sync(() => target.for(after.id).length === 1),
          "the event after the refusal"
        )
        const marker = yield* Effect.promise(() => acme.events.publish(tour("marker")))
        yield* eventually(
          Effect.sync(() => target.for(marker.id).length === 1),
          "the marker"
        )
        assert.deepStrictEqual(eventIds(target.received), [committed.id, after.id, marker.id])
        assert.strictEqual(target.for(rolledBack.id).length, 0)
        const stored = yield* query(pool, "SELECT id, ordering_key FROM waybill.events ORDER BY seq")
        assert.deepStrictEqual(
          stored.rows.map((row) => row.id),
          [committed.id, after.id, marker.id]
        )
        assert.strictEqual(stored.rows[0].ordering_key, "o1")
        const searchPath = yield* query(client, "SHOW search_path")
        assert.strictEqual(searchPath.rows[0].search_path, "public")
      }),
    60_000
  )

  it.scopedLive(
    "a transaction held open holds back the events committed after it began, until its COMMIT; earlier ones go at once",
    () =>
      Effect.gen(function* () {
        const { acme, pool } = yield* embedded(yield* Testing.freshPostgresDatabase(url!))
        const target = yield* receiver()
        yield* subscribe(acme, target)
        const long = yield* connection(pool)
        const before = yield* Effect.promise(() => acme.events.publish(tour("before")))
        yield* query(long, "BEGIN")
        const held = yield* Effect.promise(() => acme.events.publishIn(long, tour("held")))
        // Committed while the long transaction is open: above the horizon, so it waits for it.
        const behind = yield* Effect.promise(() => acme.events.publish(tour("behind")))
        yield* eventually(
          Effect.sync(() => target.for(before.id).length === 1),
          "the event committed before"
        )
        yield* Effect.sleep("3 seconds")
        assert.deepStrictEqual(eventIds(target.received), [before.id])
        yield* query(long, "COMMIT")
        yield* eventually(
          Effect.sync(() => target.received.length === 3),
          "both events after the COMMIT"
        )
        // In commit-independent outbox order: the held transaction's event first.
        assert.deepStrictEqual(eventIds(target.received), [before.id, held.id, behind.id])
      }),
    60_000
  )

  it.scopedLive(
    "two processes on one database: every event published in a host transaction is sent once",
    () =>
      Effect.gen(function* () {
        const databaseUrl = yield* Testing.freshPostgresDatabase(url!)
        const { acme, pool } = yield* embedded(databaseUrl, `acme:${processKey}`)
        yield* serverProcess(databaseUrl)
        const target = yield* receiver(() => ({ status: 200, delayMs: 50 }))
        yield* subscribe(acme, target)
        const ids = yield* Effect.forEach(
          Array.from({ length: 40 }, (_, i) => i),
          (i) =>
            Effect.scoped(
              Effect.gen(function* () {
                const client = yield* connection(pool)
                yield* query(client, "BEGIN")
                yield* query(client, "INSERT INTO orders (id) VALUES ($1)", [`p${i}`])
                const event = yield* Effect.promise(() => acme.events.publishIn(client, tour(`p${i}`)))
                yield* query(client, "COMMIT")
                return event.id
              })
            ),
          { concurrency: 4 }
        )
        yield* eventually(
          Effect.sync(() => ids.every((id) => target.for(id).length >= 1)),
          "every event",
          30_000
        )
        yield* Effect.sleep("1 second")
        assert.deepStrictEqual(
          ids.map((id) => target.for(id).length),
          ids.map(() => 1)
        )
        // Both processes took part: the listener of each woke on the host's COMMITs.
        const senders = new Set(target.received.map((request) => request.remotePort))
        assert.isAbove(senders.size, 1)
      }),
    120_000
  )

  it.scopedLive("names the schema on a database without Waybill's, and refuses on the embedded database", () =>
    Effect.gen(function* () {
      const { acme } = yield* embedded(yield* Testing.freshPostgresDatabase(url!))
      const bareUrl = yield* Testing.freshPostgresDatabase(url!)
      const bare = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new pg.Client({ connectionString: bareUrl })
          await client.connect()
          return client
        }),
        (client) => Effect.promise(() => client.end())
      )
      const missing = yield* refusal(acme.events.publishIn(bare, tour("nowhere")))
      assert.strictEqual(missing.status, 400)
      assert.match(missing.message, /"waybill"/)
      assert.deepStrictEqual(
        missing.issues.map((issue) => issue.path),
        ["executor"]
      )
      const inMemory = yield* Effect.acquireRelease(
        Effect.promise(() =>
          Waybill.make({ env: { WAYBILL_API_KEYS: `acme:${key}`, WAYBILL_DATA_DIR: "memory://", ...runLogFormat } })
        ),
        (waybill) => Effect.promise(() => waybill.close())
      )
      const embeddedRefusal = yield* refusal(inMemory.forWorkspace("acme").events.publishIn(bare, tour("nowhere")))
      assert.match(embeddedRefusal.message, /publishIn needs PostgreSQL \(DATABASE_URL\)/)
    })
  )
})
