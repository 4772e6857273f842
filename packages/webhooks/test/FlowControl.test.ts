import { assert, describe, it } from "@effect/vitest"
import type { CurrentWorkspace } from "@waybill/core/Workspace"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { Dispatcher } from "../src/Dispatcher.js"
import * as FlowControl from "../src/FlowControl.js"
import * as Retention from "../src/Retention.js"
import { WebhookService } from "../src/WebhookService.js"
import {
  deliveriesOf,
  inWorkspace,
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

describe("FlowControl rules", () => {
  it("the rate window counts the current slot and the 30 before it, and spreads a second's attempts", () => {
    const limit = 40
    let window = FlowControl.emptyWindow
    // At most the limit's share of a slot (40 / 20) at once.
    assert.strictEqual(FlowControl.perSlot(limit), 2)
    assert.strictEqual(FlowControl.perSlot(3), 1)
    assert.strictEqual(FlowControl.allowance(window, 1_000_000, limit), 2)
    for (let now = 1_000_000; now < 1_001_000; now += 50) {
      window = FlowControl.record(window, now, FlowControl.allowance(window, now, limit))
    }
    // 20 slots of 2: 40 in the second, so nothing more until the first slot leaves the window.
    assert.strictEqual(FlowControl.allowance(window, 1_001_000, limit), 0)
    assert.strictEqual(FlowControl.allowance(window, 1_001_549, limit), 0)
    assert.strictEqual(FlowControl.allowance(window, 1_001_550, limit), 2)
    // A claimer whose clock is behind the window's counts into its newest slot.
    const behind = FlowControl.record(FlowControl.record(FlowControl.emptyWindow, 2_000_000, 1), 1_999_000, 2)
    assert.deepStrictEqual(behind, { slot: 40_000, counts: [3] })
  })

  it("no window of one second holds more than the limit, however claims come", () => {
    const limit = 7
    let window = FlowControl.emptyWindow
    const starts: Array<number> = []
    for (let now = 0; now < 10_000; now += 13) {
      const n = Math.min(3, FlowControl.allowance(window, now, limit))
      window = FlowControl.record(window, now, n)
      for (let i = 0; i < n; i++) starts.push(now)
    }
    assert.isAbove(starts.length, 40)
    for (const [i, start] of starts.entries()) {
      assert.isAtMost(starts.slice(i).filter((at) => at < start + 1_500).length, limit)
    }
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

  it.effect("a webhook holding deliveries answers when the oldest expires, under the retention in context", () =>
    Effect.gen(function* () {
      const day = 86_400_000
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const other = yield* register(registration({ url: "https://hooks.example.org/other" }))
      const disabled = yield* call((s) => s.disable(webhook.id))
      assert.isFalse("oldestHeldExpiresAt" in disabled, "nothing held yet")
      // The oldest held delivery's event half a second past NOW, a later one 5 s after it.
      yield* TestClock.setTime(NOW + 500)
      yield* publishTours(1)
      yield* TestClock.setTime(NOW + 5_500)
      yield* publishTours(1)
      yield* settle
      const withWindow = (retentionMs: number) => Effect.provideService(Retention.Window, { retentionMs })

      // The default retention, 30 days, from the event's time (floored to the second).
      assert.strictEqual((yield* call((s) => s.get(webhook.id))).oldestHeldExpiresAt, (NOW + 30 * day) / 1000)
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
      // A retention of 0 keeps everything: nothing expires.
      assert.isFalse("oldestHeldExpiresAt" in (yield* call((s) => s.get(webhook.id)).pipe(withWindow(0))))
      // Enabled: its deliveries are pending again, nothing is held.
      const enabled = yield* call((s) => s.enable(webhook.id)).pipe(withWindow(120_000))
      assert.isFalse("oldestHeldExpiresAt" in enabled)
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

  it.effect("a rate limit spreads attempts over seconds; FIFO sends one at a time in event order", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* register(registration({ url: "https://hooks.example.org/rate", rateLimitPerSecond: 2 }))
      yield* register(registration({ url: "https://hooks.example.org/fifo", ordering: "fifo" }))
      const events = yield* publishTours(5)
      yield* settle
      // Claims every 100 ms for 4 s: the limit's share of a slot at once (one), two a second.
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
