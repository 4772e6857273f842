import { assert, describe, it } from "@effect/vitest"
import * as EventIntake from "@waybill/events/EventIntake"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { Dispatcher } from "../src/Dispatcher.js"
import { deliveriesOf, inWorkspace, makeLayer, NOW, register, registration, requests, tour, wsA } from "./fixtures.js"

const answerMs = 100

const publishKeyed = (keys: ReadonlyArray<string | undefined>) =>
  Effect.forEach(keys, (orderingKey, i) =>
    EventIntake.publish({
      type: "tour-created",
      payload: { tour: { ...tour(), id: `tour_${i}` } },
      ...(orderingKey === undefined ? {} : { orderingKey })
    }).pipe(
      inWorkspace(wsA),
      Effect.map((event) => ({ id: event.id, key: orderingKey }))
    )
  )

// `run` on the test clock for `ms`, in steps of 10 ms with the fibers running between them.
const runFor = (ms: number) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(Effect.flatMap(Dispatcher, (d) => d.run))
    yield* Effect.flatMap(Dispatcher, (d) => d.wake)
    for (let step = 0; step < ms / 10; step++) {
      yield* TestClock.adjust(10)
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
    }
    yield* Fiber.interrupt(fiber)
  })

describe("ordering by key", () => {
  it.effect(
    "run: one key's deliveries one at a time in event order, keys at once, a failing key holds back only itself",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const webhook = yield* register(registration({ ordering: "key" }))
        const events = yield* publishKeyed(["a", "b", "fail", "a", "b", "fail", undefined, "a", "b", undefined])
        yield* runFor(5_000)
        const keyOf = new Map(events.map((event) => [event.id, event.key]))
        const sent = (yield* requests).map((received) => ({
          eventId: received.request.headers["X-Event-Id"]!,
          attempt: received.request.headers["X-Delivery-Attempt"]!,
          start: received.at,
          end: received.at + answerMs
        }))
        for (const key of ["a", "b", "fail"]) {
          const ofKey = sent.filter((request) => keyOf.get(request.eventId) === key)
          const firsts = [...new Set(ofKey.map((request) => request.eventId))]
          assert.deepStrictEqual(
            firsts,
            events.filter((event) => event.key === key).map((event) => event.id),
            `key ${key}: in event order`
          )
          for (let i = 1; i < ofKey.length; i++) {
            assert.isAtLeast(ofKey[i]!.start, ofKey[i - 1]!.end, `key ${key}: request ${i} after the one before`)
          }
        }
        // The failing key's first delivery took its attempt and its retry (1 s later) before the next.
        const failing = sent.filter((request) => keyOf.get(request.eventId) === "fail")
        assert.deepStrictEqual(
          failing.map((request) => request.attempt),
          ["1", "2", "1"]
        )
        const others = sent.filter((request) => keyOf.get(request.eventId) !== "fail")
        assert.strictEqual(others.length, 8, "every other delivery sent once")
        assert.isBelow(
          Math.max(...others.map((request) => request.end)),
          failing[2]!.start,
          "the other keys did not wait for the failing one"
        )
        // Keys at once: the first of a, b and the failing key, and the keyless, all started together.
        const startOf = (id: string) => sent.find((request) => request.eventId === id)!.start
        assert.strictEqual(startOf(events[0]!.id), startOf(events[1]!.id))
        assert.strictEqual(startOf(events[6]!.id), startOf(events[9]!.id), "keyless events are not ordered")
        const log = yield* deliveriesOf(webhook.id)
        assert.sameMembers(
          log.map((delivery) => delivery.orderingKey),
          events.map((event) => event.key ?? null)
        )
      }).pipe(
        Effect.provide(
          makeLayer({
            respond: (request) =>
              Effect.as(Effect.sleep(answerMs), {
                statusCode: request.body.includes('"tour_2"') ? 500 : 200
              }),
            dispatcher: { retryDelayMs: 1_000, retryJitter: 0 }
          })
        )
      )
  )
})
