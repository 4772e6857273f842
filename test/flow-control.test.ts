/**
 * Flow control over HTTP (contract §8), on PGlite and PostgreSQL, on the reference server and the
 * Express host: the settings a webhook answers and refuses, `POST /webhooks/{id}/disable` and
 * `/enable` with held deliveries sent on enable (and, while held, when the oldest expires), and
 * automatic disabling with `WAYBILL_DISABLE_AFTER_FAILURES` (here 2).
 */
import { assert } from "@effect/vitest"
import * as Id from "@waybill/core/Id"
import * as Retention from "@waybill/webhooks/Retention"
import { Effect, Option } from "effect"
import { call, forEachServer, keys } from "./harness.js"
import { eventually, receiver } from "./receivers.js"

const api = (path: string, options: Parameters<typeof call>[1] = {}) => call(path, { key: keys.a, ...options })

const register = (json: Record<string, unknown>) =>
  Effect.gen(function* () {
    const created = yield* api("/webhooks", {
      json: { events: ["tour-created"], auth: { type: "bearer", token: "t" }, ...json }
    })
    assert.strictEqual(created.status, 201, created.text)
    yield* Effect.addFinalizer(() => Effect.asVoid(api(`/webhooks/${created.body.id}`, { method: "DELETE" })))
    return created.body as { id: string } & Record<string, unknown>
  })

const publish = (id: string) =>
  Effect.map(
    api("/events", {
      json: { type: "tour-created", payload: { tour: { id, status: "planned", substatus: null, properties: {} } } }
    }),
    (reply) => reply.body.id as string
  )

forEachServer(
  "Flow control over HTTP",
  (it) => {
    it.scoped("a webhook answers status, rateLimitPerSecond and ordering; bad values are 400s at their paths", () =>
      Effect.gen(function* () {
        const target = yield* receiver()
        const plain = yield* register({ url: target.url })
        assert.deepStrictEqual([plain.status, plain.rateLimitPerSecond, plain.ordering], ["enabled", null, "none"])
        const set = yield* register({ url: target.url, rateLimitPerSecond: 50, ordering: "fifo" })
        assert.deepStrictEqual([set.rateLimitPerSecond, set.ordering], [50, "fifo"])
        const bad = yield* api("/webhooks", {
          json: {
            url: target.url,
            events: ["tour-created"],
            auth: { type: "bearer", token: "t" },
            rateLimitPerSecond: 10_001,
            ordering: "random"
          }
        })
        assert.strictEqual(bad.status, 400)
        assert.deepStrictEqual(bad.body.issues.map((issue: { path: string }) => issue.path).sort(), [
          "ordering",
          "rateLimitPerSecond"
        ])
        for (const action of ["disable", "enable"]) {
          const missing = yield* api(`/webhooks/whk_missing/${action}`, { method: "POST" })
          assert.strictEqual(missing.status, 404, action)
        }
      })
    )

    it.scoped("disable holds deliveries and sends nothing; enable sends them in event order", () =>
      Effect.gen(function* () {
        const target = yield* receiver()
        const webhook = yield* register({ url: target.url })
        const disabled = yield* api(`/webhooks/${webhook.id}/disable`, { method: "POST" })
        assert.strictEqual(disabled.status, 200, disabled.text)
        assert.deepStrictEqual(
          [disabled.body.status, disabled.body.disabledReason, typeof disabled.body.disabledAt],
          ["disabled", "manual", "number"]
        )
        const again = yield* api(`/webhooks/${webhook.id}/disable`, { method: "POST" })
        assert.deepStrictEqual(again.body, disabled.body)
        const events = [yield* publish("tour_held_1"), yield* publish("tour_held_2"), yield* publish("tour_held_3")]
        yield* eventually(
          Effect.map(api(`/webhooks/${webhook.id}/deliveries`), (log) => log.body.data.length === 3),
          "three deliveries"
        )
        const log = yield* api(`/webhooks/${webhook.id}/deliveries`)
        assert.deepStrictEqual(
          log.body.data.map((delivery: { status: string }) => delivery.status),
          ["held", "held", "held"]
        )
        assert.strictEqual(target.received.length, 0)
        // While it holds them, its answers say when the oldest expires: that delivery's event
        // time (which its id carries) plus the retention (the default, 30 days).
        const oldest = log.body.data.map((delivery: { id: string }) => delivery.id).sort()[0]
        const expiresAt = Math.floor((Option.getOrThrow(Id.timeOf(oldest)) + Retention.defaultRetentionMs) / 1000)
        const shown = yield* api(`/webhooks/${webhook.id}`)
        assert.strictEqual(shown.body.oldestHeldExpiresAt, expiresAt, shown.text)
        const listed = yield* api("/webhooks?limit=100")
        const inList = listed.body.data.find((answer: { id: string }) => answer.id === webhook.id)
        assert.strictEqual(inList.oldestHeldExpiresAt, expiresAt, listed.text)
        const enabled = yield* api(`/webhooks/${webhook.id}/enable`, { method: "POST" })
        assert.strictEqual(enabled.status, 200)
        assert.strictEqual(enabled.body.status, "enabled")
        assert.isFalse("disabledReason" in enabled.body)
        assert.isFalse("oldestHeldExpiresAt" in enabled.body)
        yield* eventually(
          Effect.sync(() => target.received.length === 3),
          "the held deliveries"
        )
        assert.deepStrictEqual(
          target.received.map((request) => request.headers["x-event-id"]),
          events
        )
      })
    )

    it.scoped("after two deliveries in a row failed, the webhook is disabled as failing and holds the next", () =>
      Effect.gen(function* () {
        const target = yield* receiver(() => ({ status: 503 }))
        const webhook = yield* register({ url: target.url })
        yield* publish("tour_failing_1")
        yield* publish("tour_failing_2")
        yield* eventually(
          Effect.map(api(`/webhooks/${webhook.id}`), (reply) => reply.body.status === "disabled"),
          "automatic disabling"
        )
        const stopped = yield* api(`/webhooks/${webhook.id}`)
        assert.strictEqual(stopped.body.disabledReason, "failing")
        const held = yield* publish("tour_failing_3")
        yield* eventually(
          Effect.map(api(`/webhooks/${webhook.id}/deliveries`), (log) =>
            log.body.data.some(
              (delivery: { eventId: string; status: string }) => delivery.eventId === held && delivery.status === "held"
            )
          ),
          "the third delivery held"
        )
        assert.strictEqual(target.for(held).length, 0)
      })
    )
  },
  { disableAfterFailures: 2 }
)
