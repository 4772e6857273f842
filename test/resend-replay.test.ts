/**
 * Resend and replay over HTTP (contract §5), on PGlite and PostgreSQL: a resend of a failed and
 * of a succeeded delivery numbers its attempts on with the same id and body; 409 while pending;
 * 404 across workspaces; a replay resends the failed deliveries of its window once, none outside
 * it, none twice when two replays run at once (and, on PostgreSQL, when two server processes on
 * one database replay at once); 400s for bad windows.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ReferenceDataFile from "@waybill/server/ReferenceDataFile"
import * as Server from "@waybill/server/Server"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Layer, Redacted } from "effect"
import { call, forEachServer, isErrorBody, keys, testConfig, testLog } from "./harness.js"
import { eventually, type Received, receiver } from "./receivers.js"

const hmacSecret = "e2e-hmac-secret-0123456789"

const api = (path: string, options: Parameters<typeof call>[1] = {}) => call(path, { key: keys.a, ...options })

const register = (url: string, key: string = keys.a) =>
  call("/webhooks", {
    key,
    json: { url, events: ["tour-created"], auth: { type: "hmac", secret: hmacSecret } }
  })

const publish = (id: string) =>
  Effect.map(
    api("/events", {
      json: { type: "tour-created", payload: { tour: { id, status: "planned", substatus: null, properties: {} } } }
    }),
    (reply) => reply.body.id as string
  )

interface LoggedAttempt {
  readonly statusCode: number | null
  readonly trigger: string
}

const deliveryLog = (webhookId: string) =>
  Effect.map(
    api(`/webhooks/${webhookId}/deliveries?limit=100`),
    (reply) => reply.body.data as Array<{ id: string; eventId: string; status: string; attempts: Array<LoggedAttempt> }>
  )

const logOf = (webhookId: string, eventId: string) =>
  Effect.map(deliveryLog(webhookId), (log) => log.find((delivery) => delivery.eventId === eventId))

const statusIs = (webhookId: string, eventId: string, status: string, attempts: number) =>
  Effect.map(
    logOf(webhookId, eventId),
    (delivery) => delivery?.status === status && delivery.attempts.length === attempts
  )

// Waits until the wall clock enters a new second, and answers it.
const nextSecond = Effect.promise(
  () =>
    new Promise<number>((resolve) => {
      const now = Date.now()
      setTimeout(() => resolve(Math.floor(now / 1000) + 1), 1000 - (now % 1000) + 20)
    })
)

const attemptHeaders = (requests: ReadonlyArray<Received>) =>
  requests.map((request) => request.headers["x-delivery-attempt"])

forEachServer("resend and replay over HTTP", (it) => {
  it.scoped("resend of a failed, then of a succeeded delivery: attempts 3, 4, 5, manual, same id and body", () =>
    Effect.gen(function* () {
      // 500, 500 (failed); the resend's cycle: 500, 200; then a resend of the succeeded one: 200.
      const target = yield* receiver((_, index) => ({ status: index === 3 || index === 4 ? 200 : 500 }))
      const webhook = (yield* register(target.url)).body
      const eventId = yield* publish("tour_resend")
      yield* eventually(statusIs(webhook.id, eventId, "failed", 2), "the delivery to fail")
      const failed = (yield* logOf(webhook.id, eventId))!
      assert.deepStrictEqual(
        failed.attempts.map((attempt) => attempt.trigger),
        ["automatic", "automatic"]
      )

      const resent = yield* api(`/webhooks/${webhook.id}/deliveries/${failed.id}/resend`, { method: "POST" })
      assert.strictEqual(resent.status, 202, resent.text)
      assert.strictEqual(resent.body.id, failed.id)
      assert.strictEqual(resent.body.status, "pending")
      assert.strictEqual(resent.body.attempts.length, 2)
      yield* eventually(statusIs(webhook.id, eventId, "succeeded", 4), "the resent delivery to succeed on its retry")

      const again = yield* api(`/webhooks/${webhook.id}/deliveries/${failed.id}/resend`, { method: "POST" })
      assert.strictEqual(again.status, 202, again.text)
      yield* eventually(statusIs(webhook.id, eventId, "succeeded", 5), "the succeeded delivery to be sent again")

      const requests = target.for(eventId)
      assert.deepStrictEqual(attemptHeaders(requests), ["1", "2", "3", "4", "5"])
      for (const request of requests) {
        assert.strictEqual(request.headers["x-delivery-id"], failed.id)
        assert.strictEqual(request.body, requests[0]!.body)
      }
      const log = (yield* logOf(webhook.id, eventId))!
      assert.deepStrictEqual(
        log.attempts.map((attempt) => [attempt.statusCode, attempt.trigger]),
        [
          [500, "automatic"],
          [500, "automatic"],
          [500, "manual"],
          [200, "manual"],
          [200, "manual"]
        ]
      )
      // The resend's cycle failing once raised no alert; only the first cycle's second failure did.
      const alerts = (yield* api(`/alerts?webhookId=${webhook.id}`)).body.data
      assert.strictEqual(alerts.length, 1)
    })
  )

  it.scoped("a resent delivery that fails twice again is failed with a second alert", () =>
    Effect.gen(function* () {
      const target = yield* receiver(() => ({ status: 503 }))
      const webhook = (yield* register(target.url)).body
      const eventId = yield* publish("tour_resend_fail")
      yield* eventually(statusIs(webhook.id, eventId, "failed", 2), "the delivery to fail")
      const delivery = (yield* logOf(webhook.id, eventId))!
      assert.strictEqual(
        (yield* api(`/webhooks/${webhook.id}/deliveries/${delivery.id}/resend`, { method: "POST" })).status,
        202
      )
      yield* eventually(statusIs(webhook.id, eventId, "failed", 4), "the resend's cycle to fail")
      assert.deepStrictEqual(attemptHeaders(target.for(eventId)), ["1", "2", "3", "4"])
      yield* eventually(
        Effect.map(api(`/alerts?webhookId=${webhook.id}`), (reply) => reply.body.data.length === 2),
        "a second alert"
      )
    })
  )

  it.scoped("409 conflict while the delivery is pending; 404 for unknown and foreign ones", () =>
    Effect.gen(function* () {
      const target = yield* receiver(() => ({ status: 200, delayMs: 1_500 }))
      const webhook = (yield* register(target.url)).body
      const eventId = yield* publish("tour_pending")
      yield* eventually(
        Effect.map(logOf(webhook.id, eventId), (delivery) => delivery !== undefined),
        "the delivery to be recorded"
      )
      const delivery = (yield* logOf(webhook.id, eventId))!
      assert.strictEqual(delivery.status, "pending")
      const path = `/webhooks/${webhook.id}/deliveries/${delivery.id}/resend`
      const conflict = yield* api(path, { method: "POST" })
      assert.isTrue(isErrorBody(conflict, 409, "conflict"), conflict.text)

      const foreign = yield* call(path, { method: "POST", key: keys.b })
      assert.isTrue(isErrorBody(foreign, 404, "not_found"), foreign.text)
      const unknownDelivery = yield* api(`/webhooks/${webhook.id}/deliveries/dlv_unknown/resend`, { method: "POST" })
      assert.isTrue(isErrorBody(unknownDelivery, 404, "not_found"), unknownDelivery.text)
      const unknownWebhook = yield* api(`/webhooks/whk_unknown/deliveries/${delivery.id}/resend`, { method: "POST" })
      assert.isTrue(isErrorBody(unknownWebhook, 404, "not_found"), unknownWebhook.text)
      // A delivery of another webhook of the same workspace is not this webhook's.
      const other = (yield* register(target.url)).body
      const crossed = yield* api(`/webhooks/${other.id}/deliveries/${delivery.id}/resend`, { method: "POST" })
      assert.isTrue(isErrorBody(crossed, 404, "not_found"), crossed.text)
      const foreignReplay = yield* call(`/webhooks/${webhook.id}/replay`, {
        key: keys.b,
        json: { since: Math.floor(Date.now() / 1000) - 60 }
      })
      assert.isTrue(isErrorBody(foreignReplay, 404, "not_found"), foreignReplay.text)
      // A foreign workspace's webhook cannot resend either, with its own key.
      const foreignHook = (yield* register(target.url, keys.b)).body
      const mixed = yield* call(`/webhooks/${foreignHook.id}/deliveries/${delivery.id}/resend`, {
        method: "POST",
        key: keys.b
      })
      assert.isTrue(isErrorBody(mixed, 404, "not_found"), mixed.text)
      yield* eventually(statusIs(webhook.id, eventId, "succeeded", 1), "the slow delivery to succeed")
      assert.strictEqual(target.for(eventId).length, 1)
    })
  )

  it.scoped("400 for bad replay windows, with the issues at their paths", () =>
    Effect.gen(function* () {
      const target = yield* receiver()
      const webhook = (yield* register(target.url)).body
      const now = Math.floor(Date.now() / 1000)
      const replay = (json: unknown) => api(`/webhooks/${webhook.id}/replay`, { json })
      const cases: Array<[unknown, ReadonlyArray<string>]> = [
        [{ since: now - 31 * 86_400 }, ["since"]],
        [{ since: now - 60, until: now - 60 }, ["until"]],
        [{ since: now - 60, until: now - 120 }, ["until"]],
        [{}, ["since"]],
        [{ since: "yesterday", status: "pending" }, ["since", "status"]],
        [{ since: now - 60, extra: true }, ["extra"]],
        [[], [""]]
      ]
      for (const [body, paths] of cases) {
        const reply = yield* replay(body)
        assert.isTrue(isErrorBody(reply, 400, "bad_request"), `${JSON.stringify(body)}: ${reply.text}`)
        assert.deepStrictEqual(
          reply.body.issues.map((issue: { path: string }) => issue.path),
          paths,
          JSON.stringify(body)
        )
      }
      const fine = yield* replay({ since: now - 29 * 86_400 })
      assert.strictEqual(fine.status, 202, fine.text)
      assert.deepStrictEqual(fine.body, { deliveries: 0 })
    })
  )

  it.scoped("replay resends the failed deliveries of its window once, in two concurrent replays", () =>
    Effect.gen(function* () {
      let healthy = false
      const target = yield* receiver(() => ({ status: healthy ? 200 : 500 }))
      const webhook = (yield* register(target.url)).body
      const before = yield* publish("tour_before")
      const since = yield* nextSecond
      const inside = [yield* publish("tour_in_1"), yield* publish("tour_in_2"), yield* publish("tour_in_3")]
      const until = yield* nextSecond
      const after = yield* publish("tour_after")
      for (const eventId of [before, ...inside, after]) {
        yield* eventually(statusIs(webhook.id, eventId, "failed", 2), `${eventId} to fail`)
      }
      // One succeeded delivery inside the window: a replay of failed ones leaves it alone.
      healthy = true
      const succeeded = inside[2]!
      const delivery = (yield* logOf(webhook.id, succeeded))!
      yield* api(`/webhooks/${webhook.id}/deliveries/${delivery.id}/resend`, { method: "POST" })
      yield* eventually(statusIs(webhook.id, succeeded, "succeeded", 3), "the resend")
      // A webhook registered after the events were fanned out has nothing to replay.
      const late = (yield* register(target.url)).body

      const [first, second] = yield* Effect.all(
        [
          api(`/webhooks/${webhook.id}/replay`, { json: { since, until } }),
          api(`/webhooks/${webhook.id}/replay`, { json: { since, until, status: "failed" } })
        ],
        { concurrency: 2 }
      )
      assert.strictEqual(first.status, 202, first.text)
      assert.strictEqual(second.status, 202, second.text)
      assert.strictEqual(first.body.deliveries + second.body.deliveries, 2)
      for (const eventId of inside.slice(0, 2)) {
        yield* eventually(statusIs(webhook.id, eventId, "succeeded", 3), `${eventId} replayed`)
      }
      const lateReplay = yield* api(`/webhooks/${late.id}/replay`, { json: { since: since - 10 } })
      assert.deepStrictEqual(lateReplay.body, { deliveries: 0 })
      // Time for anything sent twice to arrive.
      yield* Effect.sleep("1 second")
      for (const eventId of inside.slice(0, 2)) {
        assert.deepStrictEqual(attemptHeaders(target.for(eventId)), ["1", "2", "3"])
        const log = (yield* logOf(webhook.id, eventId))!
        assert.strictEqual(log.attempts[2]!.trigger, "manual")
      }
      assert.strictEqual(target.for(before).length, 2)
      assert.strictEqual(target.for(after).length, 2)
      assert.strictEqual(target.for(succeeded).length, 3)

      // status all: the succeeded one too, and the failed ones outside no more than before.
      const all = yield* api(`/webhooks/${webhook.id}/replay`, { json: { since, until, status: "all" } })
      assert.deepStrictEqual(all.body, { deliveries: 3 })
      for (const eventId of inside) {
        yield* eventually(
          Effect.map(logOf(webhook.id, eventId), (log) => log?.status === "succeeded" && log.attempts.length === 4),
          `${eventId} replayed again`
        )
      }
      assert.strictEqual(target.for(before).length, 2)
    })
  )
})

const url = process.env.DATABASE_URL
// The log of the two servers, shown after a test that failed.
const log = testLog("the two servers")
log.showOnFailure()

describe.skipIf(!url)("replay with two server processes on one PostgreSQL", () => {
  it.live(
    "two servers replaying the same window at once send every failed delivery once",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const database = yield* Testing.freshPostgresDatabase(url!)
          const referenceData = yield* ReferenceDataFile.load(ReferenceDataFile.defaultPath)
          const config = testConfig({ _tag: "Postgres", url: Redacted.make(database), maxConnections: 5 })
          const server = Server.layer(config, referenceData).pipe(Layer.provide(log.layer))
          const servers = yield* Effect.all([Layer.build(server), Layer.build(server)])
          const bases = yield* Effect.forEach(servers, (context) => Effect.provide(Server.baseUrl, context))
          const on = (base: string, path: string, json?: unknown) =>
            Effect.promise(() =>
              fetch(`${base}${path}`, {
                method: "POST",
                headers: { authorization: `Bearer ${keys.a}`, "content-type": "application/json" },
                ...(json === undefined ? {} : { body: JSON.stringify(json) })
              }).then(async (response) => ({ status: response.status, body: await response.json() }))
            )
          let healthy = false
          const target = yield* receiver(() => ({ status: healthy ? 200 : 500 }))
          const webhook = (yield* on(bases[0]!, "/webhooks", {
            url: target.url,
            events: ["tour-created"],
            auth: { type: "hmac", secret: hmacSecret }
          })).body
          const since = Math.floor(Date.now() / 1000)
          const count = 60
          const eventIds: Array<string> = []
          for (let i = 0; i < count; i++) {
            const published = yield* on(bases[i % 2]!, "/events", {
              type: "tour-created",
              payload: { tour: { id: `tour_p${i}`, status: "planned", substatus: null, properties: {} } }
            })
            eventIds.push(published.body.id)
          }
          yield* eventually(
            Effect.sync(() => eventIds.every((id) => target.for(id).length === 2)),
            "every delivery to fail twice",
            60_000
          )
          const failedAll = Effect.promise(() =>
            fetch(`${bases[0]}/webhooks/${webhook.id}/deliveries?limit=100`, {
              headers: { authorization: `Bearer ${keys.a}` }
            }).then(async (response) => (await response.json()).data as Array<{ status: string }>)
          )
          yield* eventually(
            Effect.map(failedAll, (log) => log.length === count && log.every((d) => d.status === "failed")),
            "every delivery to be recorded failed",
            30_000
          )
          healthy = true
          const replies = yield* Effect.all(
            [
              on(bases[0]!, `/webhooks/${webhook.id}/replay`, { since }),
              on(bases[1]!, `/webhooks/${webhook.id}/replay`, { since }),
              on(bases[1]!, `/webhooks/${webhook.id}/replay`, { since })
            ],
            { concurrency: 3 }
          )
          for (const reply of replies) assert.strictEqual(reply.status, 202)
          assert.strictEqual(
            replies.reduce((sum, reply) => sum + reply.body.deliveries, 0),
            count
          )
          yield* eventually(
            Effect.map(failedAll, (log) => log.every((d) => d.status === "succeeded")),
            "every replayed delivery to succeed",
            60_000
          )
          yield* Effect.sleep("1 second")
          for (const id of eventIds) assert.deepStrictEqual(attemptHeaders(target.for(id)), ["1", "2", "3"])
        })
      ),
    180_000
  )
})
