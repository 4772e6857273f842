import { assert, describe, it } from "@effect/vitest"
import type { CurrentWorkspace } from "@waybill/core/Workspace"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as fc from "fast-check"
import { Dispatcher, make } from "../src/Dispatcher.js"
import * as FlowControl from "../src/FlowControl.js"
import * as Retention from "../src/Retention.js"
import { WebhookService } from "../src/WebhookService.js"
import {
  captureLogs,
  deliveriesOf,
  inWorkspace,
  LogLines,
  makeLayer,
  NOW,
  ok,
  publish,
  register,
  registration,
  requests,
  settle,
  tour,
  wsA
} from "./fixtures.js"

const call = <A, E>(f: (service: WebhookService["Type"]) => Effect.Effect<A, E, CurrentWorkspace>) =>
  Effect.flatMap(WebhookService, f).pipe(inWorkspace(wsA))

const eventIds = Effect.map(requests, (sent) => sent.map((received) => received.request.headers["X-Event-Id"]!))

const publishTours = (count: number) =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => i),
    (i) => Effect.map(publish("tour-created", { tour: { ...tour(), id: `tour_${i}` } }), (event) => event.id)
  )

// The most of `times` in any window of one second.
const mostInASecond = (times: ReadonlyArray<number>) => {
  const sorted = [...times].sort((a, b) => a - b)
  let most = 0
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= 1_000) j++
    most = Math.max(most, i - j + 1)
  }
  return most
}

// Two loops claiming one busy webhook for 30 s, as `run` does: at their polls (1 s), when one of
// their attempts ends, and again at `nextClaimAt` (each of these late by up to 40 ms). Each attempt
// wakes `wake` ms after its slot (a busy host); one woken after its `startBy` gives its claim back
// and claims again. The starts, and how often each delivery was given back.
const busyWebhook = (
  limit: number,
  phases: readonly [number, number],
  late: ReadonlyArray<number>,
  durations: ReadonlyArray<number>,
  wake: ReadonlyArray<number> = [0]
) => {
  const claims = phases.flatMap((phase) => Array.from({ length: 31 }, (_, k) => NOW + phase + k * 1_000))
  const starts: Array<number> = []
  const misses: Array<number> = []
  // Deliveries given back, by how often: the earliest due, so claimed before new ones.
  const givenBack: Array<number> = []
  let nextAt = 0
  let n = 0
  let woken = 0
  while (claims.length > 0) {
    claims.sort((a, b) => b - a)
    const now = claims.pop()!
    if (now > NOW + 31_000) break
    const count = FlowControl.schedule(nextAt, now, limit, 32, FlowControl.horizonMs).notBefore.length
    const taken = [...givenBack.splice(0, count), ...Array.from({ length: count - givenBack.length }, () => 0)]
    const placed = FlowControl.place(
      nextAt,
      now,
      limit,
      FlowControl.horizonMs,
      taken.map((missed) => FlowControl.slotsFor(missed, limit))
    )
    nextAt = placed.nextAt
    taken.forEach((missed, i) => {
      const at = placed.notBefore[i]! + wake[woken++ % wake.length]!
      if (at <= placed.startBy[i]!) {
        starts.push(at)
        misses.push(missed)
        claims.push(at + durations[n++ % durations.length]!)
      } else {
        givenBack.push(missed + 1)
        claims.push(at + FlowControl.slotMs)
      }
    })
    if (taken.length > 0)
      claims.push(FlowControl.nextClaimAt(placed.startBy.at(-1)!, limit, now) + late[n++ % late.length]!)
  }
  return { starts, misses }
}

// `busyWebhook`'s limit, phases, claim delays and attempt durations.
const busyInputs = [
  fc.integer({ min: 1, max: 100 }),
  fc.tuple(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 999 })),
  fc.array(fc.double({ min: 0, max: 40, noNaN: true }), { minLength: 1, maxLength: 16 }),
  fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 16 })
] as const

describe("FlowControl rules", () => {
  it("a claim takes the slots within its horizon, one interval apart, and moves the next slot past them", () => {
    const step = FlowControl.interval(10)
    assert.closeTo(step, 1_000 / 9.5, 1e-9)
    // An idle webhook: its first slot half the horizon after the claim, the next one past the horizon.
    const idle = FlowControl.schedule(0, NOW, 10, 32, 100)
    assert.deepStrictEqual(idle, { notBefore: [NOW + 50], nextAt: NOW + 50 + step })
    assert.deepStrictEqual(FlowControl.schedule(idle.nextAt, NOW + 60, 10, 32, 100), {
      notBefore: [NOW + 50 + step],
      nextAt: NOW + 50 + 2 * step
    })
    // A slot beyond the horizon: nothing, and the slot stays.
    assert.deepStrictEqual(FlowControl.schedule(NOW + 500, NOW, 10, 32, 100), { notBefore: [], nextAt: NOW + 500 })
    // 100 a second: five slots from 50 to 100 ms ahead, at most the room.
    const wide = FlowControl.schedule(0, NOW, 100, 32, 100)
    assert.strictEqual(wide.notBefore.length, 5)
    assert.closeTo(wide.nextAt, NOW + 50 + 5 * FlowControl.interval(100), 1e-6)
    assert.deepStrictEqual(FlowControl.schedule(0, NOW, 100, 3, 100).notBefore.length, 3)
    // `deliverDue` (horizon 0): only a slot due now.
    assert.deepStrictEqual(FlowControl.schedule(0, NOW, 100, 32, 0).notBefore, [NOW])
    // Nonsense schedules nothing.
    for (const [limit, room, horizon] of [
      [0, 5, 100],
      [Number.NaN, 5, 100],
      [10, 0, 100],
      [10, Number.NaN, 100],
      [10, 5, -1]
    ] as const) {
      assert.deepStrictEqual(FlowControl.schedule(0, NOW, limit, room, horizon), { notBefore: [], nextAt: 0 })
    }
    // The next claim comes when the next slot is inside its horizon, at least one slot later.
    const again = FlowControl.nextClaimAt(NOW + FlowControl.lateStartMs, 1, NOW)
    assert.strictEqual(again, NOW + 854)
    assert.deepStrictEqual(
      FlowControl.schedule(NOW + FlowControl.interval(1), again, 1, 32, FlowControl.horizonMs).notBefore,
      [NOW + FlowControl.interval(1)]
    )
    assert.strictEqual(FlowControl.nextClaimAt(NOW + FlowControl.lateStartMs, 100, NOW), NOW + FlowControl.slotMs)
  })

  it("an attempt given back for starting late holds twice the slots at each claim after the next, until it may start a second late", () => {
    assert.deepStrictEqual(
      [0, 1, 2, 3, 4, 5, 40].map((missed) => FlowControl.slotsFor(missed, 10)),
      [1, 1, 2, 4, 8, 11, 11]
    )
    // Under one a second, two slots are already more than a second.
    assert.deepStrictEqual(
      [0, 1, 2, 5].map((missed) => FlowControl.slotsFor(missed, 1)),
      [1, 1, 2, 2]
    )
    assert.deepStrictEqual(
      [4, 10, 11, 13].map((missed) => FlowControl.slotsFor(missed, 1_000)),
      [8, 512, 904, 904]
    )
    assert.strictEqual(FlowControl.slotsFor(3, 0), 1, "no limit, no slots")
    // The latest start: the claim's `startBy`, or 50 ms after a slot given alone.
    assert.strictEqual(FlowControl.latestStart({ notBefore: NOW, startBy: NOW + 300 }), NOW + 300)
    assert.strictEqual(FlowControl.latestStart({ notBefore: NOW }), NOW + FlowControl.lateStartMs)
    assert.isUndefined(FlowControl.latestStart({}))
    // Placed one after another from the claim's first slot: each may start until `lateStartMs`
    // after its last slot, and the webhook's next slot is after all of them.
    const step = FlowControl.interval(10)
    const first = NOW + FlowControl.slotMs
    assert.deepStrictEqual(FlowControl.place(0, NOW, 10, 100, [1, 2, 1]), {
      notBefore: [first, first + step, first + 3 * step],
      startBy: [first + 50, first + 2 * step + 50, first + 3 * step + 50],
      nextAt: first + 4 * step
    })
    // The first slot is `schedule`'s, whatever the horizon.
    for (const [nextAt, horizon] of [
      [0, 0],
      [NOW + 70, 100],
      [NOW + 5, 2_000]
    ] as const) {
      assert.strictEqual(
        FlowControl.place(nextAt, NOW, 10, horizon, [4]).notBefore[0],
        FlowControl.schedule(nextAt, NOW, 10, 1, horizon).notBefore[0]
      )
    }
    assert.deepStrictEqual(FlowControl.place(NOW, NOW, 10, 100, []), { notBefore: [], startBy: [], nextAt: NOW })
    assert.deepStrictEqual(FlowControl.place(NOW, NOW, Number.NaN, 100, [1]), {
      notBefore: [],
      startBy: [],
      nextAt: NOW
    })
  })

  it("property: attempts that wake late give their claims back and start in the wider slots of later claims, never more than the limit into a second", () => {
    fc.assert(
      fc.property(
        ...busyInputs,
        // How long after its slot each attempt wakes: mostly on time, some up to past a second.
        fc.array(fc.oneof(fc.constant(0), fc.constant(0), fc.double({ min: 0, max: 1_200, noNaN: true })), {
          minLength: 1,
          maxLength: 32
        }),
        (limit, phases, late, durations, wake) => {
          const { starts } = busyWebhook(limit, phases, late, durations, wake)
          return mostInASecond(starts) <= limit
        }
      ),
      // At a limit of 1, a delivery woken just over 50 ms late twice holds two slots and starts
      // 52.6 ms into them: the next delivery's slot must come after both.
      {
        numRuns: 100,
        examples: [[1, [0, 0], [0], [1], [50.00012207031251, 50.0001220703125, 0, 52.63171386718751, 0]]]
      }
    )
  })

  it("a host that wakes every attempt the same time late, under a second, still delivers each after a few claims", () => {
    for (const limit of [1, 3, 10, 100]) {
      for (const lag of [51, 300, 900, 999]) {
        let missed = 0
        let nextAt = 0
        let now = NOW
        for (;;) {
          const placed = FlowControl.place(nextAt, now, limit, FlowControl.horizonMs, [
            FlowControl.slotsFor(missed, limit)
          ])
          if (placed.notBefore[0]! + lag <= placed.startBy[0]!) break
          missed++
          nextAt = placed.nextAt
          now = placed.notBefore[0]! + lag
          assert.isAtMost(missed, 8, `limit ${limit}, ${lag} ms late`)
        }
      }
    }
  })

  it("property: claims at any times, in any order, sent with up to 50 ms of jitter, never put more than the limit into a second", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.array(
          fc.record({
            at: fc.integer({ min: 0, max: 60_000 }),
            room: fc.integer({ min: 0, max: 64 }),
            horizon: fc.integer({ min: 0, max: 2_000 })
          }),
          { maxLength: 150 }
        ),
        fc.array(fc.oneof(fc.constant(0), fc.constant(50), fc.double({ min: 0, max: 50, noNaN: true })), {
          minLength: 1,
          maxLength: 64
        }),
        (limit, claims, jitter) => {
          let nextAt = 0
          const arrivals: Array<number> = []
          // Claims run one after another under the row lock, each with the time its claimer read.
          for (const claim of claims) {
            const taken = FlowControl.schedule(nextAt, NOW + claim.at, limit, claim.room, claim.horizon)
            nextAt = taken.nextAt
            for (const at of taken.notBefore) arrivals.push(at + jitter[arrivals.length % jitter.length]!)
          }
          return mostInASecond(arrivals) <= limit
        }
      ),
      { numRuns: 200 }
    )
  })

  it("property: a busy webhook claimed by two loops gets at least 90 % of its limit", () => {
    fc.assert(
      fc.property(...busyInputs, (limit, phases, late, durations) => {
        const { starts } = busyWebhook(limit, phases, late, durations)
        const first = Math.min(...starts)
        const inSpan = starts.filter((at) => at < first + 30_000).length
        return inSpan >= 0.9 * 30 * limit && mostInASecond(starts) <= limit
      }),
      // Claims 25 ms late on a 70 ms interval: the slots must not drift behind them.
      { numRuns: 100, examples: [[15, [0, 0], [25.4095458984375], [26, 1]]] }
    )
  })

  it("endings: a success starts the count again from the failures after it", () => {
    const ws = "ws"
    assert.deepStrictEqual(
      FlowControl.endingsOf([
        { workspaceId: ws, webhookId: "a", status: "failed" },
        { workspaceId: ws, webhookId: "b", status: "pending" },
        { workspaceId: ws, webhookId: "a", status: "succeeded" },
        { workspaceId: ws, webhookId: "a", status: "failed" },
        { workspaceId: ws, webhookId: "c", status: "failed" }
      ]),
      [
        { workspaceId: ws, webhookId: "a", reset: true, failures: 1 },
        { workspaceId: ws, webhookId: "c", reset: false, failures: 1 }
      ]
    )
    assert.strictEqual(FlowControl.nextStreak(4, { reset: false, failures: 2 }), 6)
    assert.strictEqual(FlowControl.nextStreak(4, { reset: true, failures: 1 }), 1)
    assert.isFalse(FlowControl.isControlled({ status: "enabled", rateLimitPerSecond: null, ordering: "none" }))
    assert.isTrue(FlowControl.isControlled({ status: "disabled", rateLimitPerSecond: null, ordering: "none" }))
    assert.isTrue(FlowControl.isControlled({ status: "enabled", rateLimitPerSecond: 1, ordering: "none" }))
    assert.isTrue(FlowControl.isControlled({ status: "enabled", rateLimitPerSecond: null, ordering: "fifo" }))
  })
})

describe("flow control in memory", () => {
  it.effect("disable holds, enable sends the held deliveries in event order, once", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const disabled = yield* call((s) => s.disable(webhook.id))
      assert.deepStrictEqual([disabled.status, disabled.disabledReason], ["disabled", "manual"])
      const events = yield* publishTours(4)
      yield* settle
      assert.deepStrictEqual(yield* eventIds, [])
      assert.deepStrictEqual(
        (yield* deliveriesOf(webhook.id)).map((delivery) => delivery.status),
        ["held", "held", "held", "held"]
      )
      // A resend cannot jump the queue: a held delivery waits for the enable, in event order.
      const [held] = yield* deliveriesOf(webhook.id)
      const refused = yield* Effect.flip(call((s) => s.resend(webhook.id, held!.id)))
      assert.strictEqual(refused._tag, "DeliveryPending")
      assert.include(refused.message, "is held while its webhook is disabled")
      assert.strictEqual((yield* deliveriesOf(webhook.id))[0]!.status, "held")
      yield* call((s) => s.enable(webhook.id))
      yield* call((s) => s.enable(webhook.id))
      yield* settle
      yield* settle
      assert.deepStrictEqual(yield* eventIds, events)
      const notFound = yield* Effect.flip(call((s) => s.disable("whk_missing")))
      assert.strictEqual(notFound._tag, "WebhookNotFound")
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect(
    "a webhook holding deliveries answers how many and when the oldest expires, under the retention in context",
    () =>
      Effect.gen(function* () {
        const day = 86_400_000
        yield* TestClock.setTime(NOW)
        const webhook = yield* register(registration())
        const other = yield* register(registration({ url: "https://hooks.example.org/other" }))
        const disabled = yield* call((s) => s.disable(webhook.id))
        assert.isFalse("oldestHeldExpiresAt" in disabled, "nothing held yet")
        assert.isFalse("heldDeliveries" in disabled, "nothing held yet")
        // The oldest held delivery's event half a second past NOW, a later one 5 s after it.
        yield* TestClock.setTime(NOW + 500)
        yield* publishTours(1)
        yield* TestClock.setTime(NOW + 5_500)
        yield* publishTours(1)
        yield* settle
        const withWindow = (retentionMs: number) => Effect.provideService(Retention.Window, { retentionMs })

        // The default retention, 30 days, from the event's time (floored to the second).
        const shown = yield* call((s) => s.get(webhook.id))
        assert.deepStrictEqual([shown.oldestHeldExpiresAt, shown.heldDeliveries], [(NOW + 30 * day) / 1000, 2])
        // A window of 2 minutes: every answer says so (get, list, disable again, an edit).
        const expiresAt = (NOW + 120_000) / 1000
        assert.strictEqual(
          (yield* call((s) => s.get(webhook.id)).pipe(withWindow(120_000))).oldestHeldExpiresAt,
          expiresAt
        )
        assert.strictEqual(
          (yield* call((s) => s.disable(webhook.id)).pipe(withWindow(120_000))).oldestHeldExpiresAt,
          expiresAt
        )
        const edited = yield* call((s) =>
          s.update(webhook.id, { ...registration(), auth: { type: "hmac" }, description: "paused" })
        ).pipe(withWindow(120_000))
        assert.deepStrictEqual([edited.description, edited.oldestHeldExpiresAt], ["paused", expiresAt])
        const page = yield* call((s) => s.list({ limit: 10 })).pipe(withWindow(120_000))
        // Registered in the same millisecond: compared by id, not in the page's order.
        assert.deepStrictEqual(
          new Map(page.data.map((answer) => [answer.id, answer.oldestHeldExpiresAt])),
          new Map([
            [webhook.id, expiresAt],
            [other.id, undefined]
          ])
        )
        assert.isFalse(
          "oldestHeldExpiresAt" in page.data.find((answer) => answer.id === other.id)!,
          "an enabled webhook holds nothing"
        )
        assert.deepStrictEqual(
          page.data.map((answer) => answer.heldDeliveries),
          page.data.map((answer) => (answer.id === webhook.id ? 2 : undefined))
        )
        // A retention of 0 keeps everything: nothing expires, and the count still shows.
        const keptAll = yield* call((s) => s.get(webhook.id)).pipe(withWindow(0))
        assert.deepStrictEqual(["oldestHeldExpiresAt" in keptAll, keptAll.heldDeliveries], [false, 2])
        // Enabled: its deliveries are pending again, nothing is held.
        const enabled = yield* call((s) => s.enable(webhook.id)).pipe(withWindow(120_000))
        assert.isFalse("oldestHeldExpiresAt" in enabled)
        assert.isFalse("heldDeliveries" in enabled)
        assert.isFalse("oldestHeldExpiresAt" in (yield* call((s) => s.get(webhook.id)).pipe(withWindow(120_000))))
      }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("automatic disabling after two failed deliveries in a row", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      yield* publishTours(2)
      yield* settle
      yield* TestClock.adjust(13_000)
      yield* settle
      const stopped = yield* call((s) => s.get(webhook.id))
      assert.deepStrictEqual([stopped.status, stopped.disabledReason], ["disabled", "failing"])
      yield* publishTours(1)
      yield* settle
      assert.deepStrictEqual((yield* deliveriesOf(webhook.id)).map((delivery) => delivery.status).sort(), [
        "failed",
        "failed",
        "held"
      ])
    }).pipe(
      Effect.provide(
        makeLayer({ respond: () => ok(500), dispatcher: { retryDelayMs: 10_000, disableAfterFailures: 2 } })
      )
    )
  )

  it.effect("run, two loops on one store: a limit of 10 a second gets 9 and more, never 11 in a second", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* register(registration({ url: "https://hooks.example.org/rate", rateLimitPerSecond: 10 }))
      yield* publishTours(130)
      const one = yield* Dispatcher
      const two = yield* make({ shutdownGraceMs: 0 })
      const fibers = [yield* Effect.fork(one.run), yield* Effect.fork(two.run)]
      yield* one.wake
      // 11 s in steps of 10 ms, the fibers running between them.
      for (let step = 0; step < 1_100; step++) {
        yield* TestClock.adjust(10)
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
      }
      yield* Fiber.interruptAll(fibers)
      const starts = (yield* requests)
        .filter((received) => received.request.url.endsWith("/rate"))
        .map((received) => received.at)
      const first = Math.min(...starts)
      assert.isAtLeast(starts.filter((at) => at < first + 10_000).length, 90)
      assert.isAtMost(mostInASecond(starts), 10)
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect(
    "an attempt woken over 50 ms after its slot gives its claim back, and holds more slots at each claim until it starts",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const webhooks = [
          yield* register(registration({ url: "https://hooks.example.org/one", rateLimitPerSecond: 10 })),
          yield* register(registration({ url: "https://hooks.example.org/two", rateLimitPerSecond: 10 }))
        ]
        const events = yield* publishTours(3)
        const fiber = yield* Effect.fork(Effect.flatMap(Dispatcher, (d) => d.run))
        yield* Effect.flatMap(Dispatcher, (d) => d.wake)
        // One worker for two webhooks, each answer 300 ms away: one webhook's attempt waits for the
        // other's to end, past its slot.
        for (let step = 0; step < 500; step++) {
          yield* TestClock.adjust(10)
          for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
        }
        yield* Fiber.interrupt(fiber)
        const sent = yield* requests
        for (const path of ["/one", "/two"]) {
          assert.sameMembers(
            sent
              .filter((received) => received.request.url.endsWith(path))
              .map((received) => received.request.headers["X-Event-Id"]!),
            events,
            `each event sent once to ${path}`
          )
        }
        const givenBack = (yield* LogLines)
          .filter((line) => line.includes("woke after its slot"))
          .map((line) => /deliveryId=(\S+)/.exec(line)?.[1])
        assert.isAtLeast(givenBack.length, 2, "late attempts were given back")
        // Up to 300 ms late: one slot (twice) lets it start 50 ms late, two 155 ms, four 366 ms.
        const times = new Map<string, number>()
        for (const id of givenBack) times.set(id!, (times.get(id!) ?? 0) + 1)
        assert.isAtMost(Math.max(...times.values()), 4, "each given back at most four times")
        for (const path of ["/one", "/two"]) {
          const starts = sent.filter((received) => received.request.url.endsWith(path)).map((received) => received.at)
          assert.isAtMost(mostInASecond(starts), 10, `no more than the limit into a second to ${path}`)
        }
        for (const webhook of webhooks) {
          const deliveries = yield* deliveriesOf(webhook.id)
          assert.deepStrictEqual(
            deliveries.map((delivery) => delivery.attempts.length),
            [1, 1, 1],
            "a claim given back made no attempt"
          )
        }
      }).pipe(
        Effect.provide(
          Layer.merge(
            makeLayer({
              respond: () => Effect.as(Effect.sleep("300 millis"), { statusCode: 200 }),
              dispatcher: { concurrency: 1 }
            }),
            captureLogs
          )
        )
      )
  )

  it.effect("a rate limit spreads attempts over seconds; FIFO sends one at a time in event order", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* register(registration({ url: "https://hooks.example.org/rate", rateLimitPerSecond: 2 }))
      yield* register(registration({ url: "https://hooks.example.org/fifo", ordering: "fifo" }))
      const events = yield* publishTours(5)
      yield* settle
      // Claims every 100 ms for 4 s, each taking only a slot due now (no horizon in `deliverDue`).
      for (let step = 0; step < 40; step++) {
        yield* TestClock.adjust(100)
        yield* Effect.flatMap(Dispatcher, (d) => d.deliverDue)
      }
      const sent = yield* requests
      const rate = sent.filter((received) => received.request.url.endsWith("/rate")).map((received) => received.at)
      assert.strictEqual(rate.length, 5)
      for (const [i, at] of rate.entries()) {
        assert.isAtMost(rate.slice(i).filter((later) => later < at + 1_000).length, 2)
      }
      assert.deepStrictEqual(
        sent
          .filter((received) => received.request.url.endsWith("/fifo"))
          .map((received) => received.request.headers["X-Event-Id"]!),
        events
      )
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )
})
