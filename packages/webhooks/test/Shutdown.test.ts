/**
 * A stop (contract §8, "Shutdown"): `run` awaits its attempts in flight up to the grace and records
 * them, gives back at once what it had not started (also a claim waiting for its rate-limit slot),
 * abandons what outlasts the grace, and says so in one line; another dispatcher takes the rest
 * without waiting for a lease, numbering on.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { make } from "../src/Dispatcher.js"
import {
  captureLogs,
  deliveriesOf,
  eventually,
  LogLines,
  makeLayer,
  NOW,
  ok,
  publish,
  register,
  registration,
  requests,
  tour
} from "./fixtures.js"

// Three events to one webhook; two attempts at once, the third waits for a slot.
const threeInRun = (graceMs: number) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(NOW)
    const webhook = yield* register(registration())
    for (let i = 0; i < 3; i++) yield* publish("tour-created", { tour: tour() })
    const stopping = yield* make({
      concurrency: 2,
      perWebhookConcurrency: 2,
      pollIntervalMs: 60_000,
      shutdownGraceMs: graceMs
    })
    const fiber = yield* Effect.fork(stopping.run)
    yield* stopping.wake
    yield* eventually(
      Effect.map(requests, (sent) => sent.length === 2),
      "two attempts in flight"
    )
    return { webhook, stop: yield* Effect.fork(Fiber.interrupt(fiber)) }
  })

const stoppedLine = Effect.map(LogLines, (lines) => lines.filter((line) => line.includes("Deliveries stopped")))

describe("Dispatcher stop", () => {
  it.effect("awaits the attempts in flight and records them; what was not started is given back at once", () =>
    Effect.gen(function* () {
      const { webhook, stop } = yield* threeInRun(5_000)
      yield* TestClock.adjust(1_000)
      yield* Fiber.join(stop)
      const [line, ...more] = yield* stoppedLine
      assert.strictEqual(more.length, 0)
      assert.include(line, "2 attempts finished while stopping, 1 deliveries released (0 cut short)")
      const deliveries = yield* deliveriesOf(webhook.id)
      assert.deepStrictEqual(deliveries.map((delivery) => [delivery.status, delivery.attempts.length]).sort(), [
        ["pending", 0],
        ["succeeded", 1],
        ["succeeded", 1]
      ])
      // No lease to wait for: another dispatcher sends the third now, as its first attempt.
      const other = yield* make({ shutdownGraceMs: 0 })
      assert.deepStrictEqual(yield* other.deliverDue, { attempts: 1, succeeded: 1, retried: 0, failed: 0 })
      const sent = yield* requests
      assert.strictEqual(sent.length, 3)
      assert.deepStrictEqual(
        sent.map((item) => item.request.headers["X-Delivery-Attempt"]),
        ["1", "1", "1"]
      )
      assert.strictEqual(new Set(sent.map((item) => item.request.headers["X-Delivery-Id"])).size, 3)
    }).pipe(
      Effect.provide(
        Layer.merge(
          makeLayer({
            respond: (_, index) => (index < 2 ? Effect.as(Effect.sleep(1_000), { statusCode: 200 }) : ok())
          }),
          captureLogs
        )
      )
    )
  )

  it.effect("gives back at once a claim waiting for its rate-limit slot", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration({ rateLimitPerSecond: 1 }))
      yield* publish("tour-created", { tour: tour() })
      const stopping = yield* make({ pollIntervalMs: 60_000, shutdownGraceMs: 5_000 })
      const fiber = yield* Effect.fork(stopping.run)
      yield* stopping.wake
      // Claimed, its slot 50 ms ahead: the clock stands still, so it waits.
      yield* eventually(
        Effect.map(deliveriesOf(webhook.id), (deliveries) => deliveries.length === 1),
        "the delivery stored"
      )
      for (let i = 0; i < 200; i++) yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      const [line] = yield* stoppedLine
      assert.include(line, "0 attempts finished while stopping, 1 deliveries released (0 cut short)")
      assert.deepStrictEqual(yield* requests, [])
      // Released, not leased: another dispatcher sends it at its next slot, long before a lease ends.
      yield* TestClock.adjust(1_200)
      const other = yield* make({ shutdownGraceMs: 0 })
      assert.deepStrictEqual(yield* other.deliverDue, { attempts: 1, succeeded: 1, retried: 0, failed: 0 })
    }).pipe(Effect.provide(Layer.merge(makeLayer({ respond: () => ok() }), captureLogs)))
  )

  it.effect("abandons attempts that outlast the grace: released, and the next attempt never repeats their number", () =>
    Effect.gen(function* () {
      const { webhook, stop } = yield* threeInRun(1_000)
      yield* TestClock.adjust(1_000)
      yield* Fiber.join(stop)
      const [line] = yield* stoppedLine
      assert.include(line, "0 attempts finished while stopping, 3 deliveries released (2 cut short)")
      const other = yield* make({ shutdownGraceMs: 0 })
      assert.deepStrictEqual(yield* other.deliverDue, { attempts: 3, succeeded: 3, retried: 0, failed: 0 })
      const sent = yield* requests
      const cut = new Set(sent.slice(0, 2).map((item) => item.request.headers["X-Delivery-Id"]))
      for (const item of sent.slice(2)) {
        const id = item.request.headers["X-Delivery-Id"]!
        assert.strictEqual(item.request.headers["X-Delivery-Attempt"], cut.has(id) ? "2" : "1", id)
      }
      const deliveries = yield* deliveriesOf(webhook.id)
      assert.deepStrictEqual(
        deliveries.map((delivery) => [delivery.status, delivery.attempts.length]),
        [
          ["succeeded", 1],
          ["succeeded", 1],
          ["succeeded", 1]
        ]
      )
    }).pipe(
      Effect.provide(Layer.merge(makeLayer({ respond: (_, index) => (index < 2 ? Effect.never : ok()) }), captureLogs))
    )
  )
})
