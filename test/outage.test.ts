/**
 * The database goes away and comes back (contract §1 503 `unavailable`, §7 readiness): a
 * reference server on a PostgreSQL cluster of the test's own, which the test stops for a while
 * and starts again. While it is down: liveness stays 200, readiness and every request that
 * needs the database answer 503 with the error body and `Retry-After`, promptly. Once it is back
 * the server recovers by itself: ready again, requests accepted, and every event that got its
 * 202 (before the outage or after it) is delivered.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ReferenceDataFile from "@waybill/server/ReferenceDataFile"
import * as Server from "@waybill/server/Server"
import { Effect, Layer, Redacted } from "effect"
import { keys, testConfig } from "./harness.js"
import { canRunCluster, cluster } from "./postgres-cluster.js"
import { eventually, receiver } from "./receivers.js"

const request = (base: string, path: string, init: { method?: string; json?: unknown; key?: boolean } = {}) =>
  Effect.promise(async () => {
    const started = Date.now()
    const response = await fetch(`${base}${path}`, {
      method: init.method ?? (init.json === undefined ? "GET" : "POST"),
      headers: {
        ...(init.key === false ? {} : { authorization: `Bearer ${keys.a}` }),
        ...(init.json === undefined ? {} : { "content-type": "application/json" })
      },
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
      // A client's patience: an answer must come before it gives up.
      signal: AbortSignal.timeout(10_000)
    })
    const text = await response.text()
    return {
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      body: text === "" ? undefined : JSON.parse(text),
      ms: Date.now() - started
    }
  })

const tourCreated = (id: string) => ({
  type: "tour-created",
  payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
})

describe.skipIf(canRunCluster)("database outage", () => {
  it.skip("NOT RUN: no PostgreSQL server binaries to run a cluster of the test's own", () => {})
})

describe.runIf(canRunCluster)("database outage", () => {
  it.live(
    "503 unavailable with Retry-After while PostgreSQL is down; by itself ready again after; every 202 delivered",
    () =>
      Effect.gen(function* () {
        const database = yield* cluster
        const referenceData = yield* ReferenceDataFile.load(ReferenceDataFile.defaultPath)
        const config = testConfig({ _tag: "Postgres", url: Redacted.make(database.url), maxConnections: 4 })
        const base = yield* Effect.flatMap(Layer.build(Server.layer(config, referenceData)), (context) =>
          Effect.provide(Server.baseUrl, context)
        )
        const target = yield* receiver()
        const registered = yield* request(base, "/webhooks", {
          json: { url: target.url, events: ["tour-created"], auth: { type: "bearer", token: "outage-token" } }
        })
        assert.strictEqual(registered.status, 201)
        const accepted: Array<string> = []
        const publish = (id: string) =>
          Effect.tap(request(base, "/events", { json: tourCreated(id) }), (reply) =>
            Effect.sync(() => {
              if (reply.status === 202) accepted.push(reply.body.id)
            })
          )
        for (let i = 0; i < 10; i++) assert.strictEqual((yield* publish(`tour_before_${i}`)).status, 202)

        database.stop()
        const live = yield* request(base, "/health", { key: false })
        assert.strictEqual(live.status, 200)
        const ready = yield* request(base, "/health/ready", { key: false })
        assert.strictEqual(ready.status, 503)
        assert.strictEqual(ready.retryAfter, "5")
        assert.strictEqual(ready.body.code, "unavailable")
        for (const reply of [
          yield* publish("tour_during"),
          yield* request(base, "/webhooks"),
          yield* request(base, "/drafts", {
            json: { origin: "manual", status: "draft", transportShapeId: "shape_line" }
          })
        ]) {
          assert.strictEqual(reply.status, 503, JSON.stringify(reply.body))
          assert.strictEqual(reply.retryAfter, "5")
          assert.deepStrictEqual(Object.keys(reply.body).sort(), ["code", "issues", "message"])
          assert.strictEqual(reply.body.code, "unavailable")
          assert.notMatch(reply.body.message, /ECONNREFUSED|127\\.0\\.0\\.1|postgres/i)
        }

        database.start()
        const back = Date.now()
        yield* eventually(
          Effect.map(request(base, "/health/ready", { key: false }), (reply) => reply.status === 200),
          "readiness after the database is back",
          30_000
        )
        const recovered = Date.now() - back
        yield* eventually(
          Effect.map(publish("tour_after"), (reply) => reply.status === 202),
          "an event accepted after the database is back",
          30_000
        )
        yield* eventually(
          Effect.sync(() => accepted.every((id) => target.for(id).length >= 1)),
          "every accepted event delivered",
          60_000
        )
        assert.strictEqual(accepted.length, 11)
        console.log(`database outage: ready again ${recovered} ms after PostgreSQL was started`)
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )
})
