/**
 * Ordering by key (contract §8) on PGlite and PostgreSQL: a keyed webhook's claim takes, per key,
 * only its earliest pending delivery when it is due and unleased, and those without a key as they
 * come; a key waiting for its retry holds back only itself; a lease that runs out hands the head
 * to another claimer; the log shows each delivery's key.
 */
import { assert } from "@effect/vitest"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventIntake from "@waybill/events/EventIntake"
import { DeliveryStore as DeliveryStoreTag } from "@waybill/webhooks/DeliveryStore"
import * as HttpSender from "@waybill/webhooks/HttpSender"
import { WebhookService } from "@waybill/webhooks/WebhookService"
import { Effect, Schema, TestClock } from "effect"
import { claimAs, fannedOut, forEachBackend, webhookStack } from "./harness.js"

const NOW = 1_798_000_000_000
const ws = Schema.decodeSync(WorkspaceId)("flow-key")

const inWorkspace = Effect.provideService(CurrentWorkspace, { id: ws, apiKeyId: "k" })

const publish = (tourId: string, orderingKey: string | undefined) =>
  EventIntake.publish({
    type: "tour-created",
    payload: { tour: { id: tourId, status: "planned", substatus: null, properties: {} } },
    ...(orderingKey === undefined ? {} : { orderingKey })
  }).pipe(inWorkspace)

forEachBackend(
  "Ordering by key",
  webhookStack(
    HttpSender.layerScripted(() => Effect.succeed({ statusCode: 200 })),
    { retryDelayMs: 10_000 }
  ),
  (it) => {
    it.effect("per key its earliest pending delivery, keys at once, a retry holding back only its own key", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const webhook = yield* Effect.flatMap(WebhookService, (service) =>
          service.register({
            url: "https://hooks.example.org/keyed",
            events: ["tour-created"],
            auth: { type: "hmac", secret: "an-hmac-secret-of-some-length" },
            ordering: "key"
          })
        ).pipe(inWorkspace)
        assert.strictEqual(webhook.ordering, "key")
        const plan: ReadonlyArray<readonly [string, string | undefined]> = [
          ["a0", "order-a"],
          ["b0", "order-b"],
          ["a1", "order-a"],
          ["n0", undefined],
          ["b1", "order-b"],
          ["a2", "order-a"],
          ["n1", undefined]
        ]
        const events = new Map<string, string>()
        for (const [name, key] of plan) events.set((yield* publish(`tour_${name}`, key)).id, name)
        yield* fannedOut(webhook.id, plan.length)
        const store = yield* DeliveryStoreTag
        const claim = (token: string) =>
          claimAs(token).pipe(
            Effect.map((claimed) => claimed.map((delivery) => ({ ...delivery, name: events.get(delivery.eventId)! })))
          )
        const names = (claimed: ReadonlyArray<{ readonly name: string }>) => claimed.map((delivery) => delivery.name)
        const first = yield* claim("one")
        assert.deepStrictEqual(names(first), ["a0", "b0", "n0", "n1"], "each key's head, and the keyless")
        assert.deepStrictEqual(yield* claim("two"), [], "nothing while the heads are in flight")
        const byName = new Map(first.map((delivery) => [delivery.name, delivery]))
        const now = yield* TestClock.currentTimeMillis
        const attempt = (statusCode: number) => ({
          at: Math.floor(now / 1000),
          statusCode,
          durationMs: 1,
          error: statusCode === 200 ? null : ("http" as const),
          trigger: "automatic" as const
        })
        // a0 failed once and waits for its retry; the others succeeded.
        yield* store.complete([
          {
            deliveryId: byName.get("a0")!.id,
            leaseToken: "one",
            attempt: attempt(500),
            status: "pending",
            retryAt: now + 10_000
          },
          ...["b0", "n0", "n1"].map((name) => ({
            deliveryId: byName.get(name)!.id,
            leaseToken: "one",
            attempt: attempt(200),
            status: "succeeded" as const,
            retryAt: null
          }))
        ])
        const next = yield* claim("three")
        assert.deepStrictEqual(names(next), ["b1"], "key b goes on; key a waits for a0's retry")
        // The claimer of b1 dies: once its lease has run out, another claims b1 again; a0's retry is due.
        yield* TestClock.adjust(30_001)
        assert.deepStrictEqual(names(yield* claim("four")), ["b1", "a0"], "in the order they fell due")
        const later = yield* TestClock.currentTimeMillis
        const retried = yield* store.complete([
          {
            deliveryId: byName.get("a0")!.id,
            leaseToken: "four",
            attempt: { ...attempt(500), at: Math.floor(later / 1000) },
            status: "failed",
            retryAt: null
          }
        ])
        assert.strictEqual(retried.length, 1)
        assert.deepStrictEqual(names(yield* claim("five")), ["a1"], "a failed head hands its key on")
        const log = yield* Effect.flatMap(WebhookService, (service) =>
          service.deliveries(webhook.id, { limit: 100 })
        ).pipe(inWorkspace)
        assert.deepStrictEqual(
          Object.fromEntries(log.data.map((delivery) => [events.get(delivery.eventId), delivery.orderingKey])),
          Object.fromEntries(plan.map(([name, key]) => [name, key ?? null]))
        )
      })
    )
  }
)
