import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as TestClock from "effect/TestClock"
import { DeliveryStore } from "../src/DeliveryStore.js"
import { Dispatcher } from "../src/Dispatcher.js"
import * as Replay from "../src/Replay.js"
import * as Retention from "../src/Retention.js"
import { make as makeService, WebhookService } from "../src/WebhookService.js"
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
  wsA,
  wsB
} from "./fixtures.js"

const service = WebhookService
const deliverDue = Effect.flatMap(Dispatcher, (d) => d.deliverDue)

// Fans out and attempts, then lets the one retry come due and attempts it.
const settleWithRetry = Effect.gen(function* () {
  yield* settle
  yield* TestClock.adjust(2_000)
  yield* deliverDue
})

const resend = (webhookId: string, deliveryId: string) =>
  Effect.flatMap(service, (s) => s.resend(webhookId, deliveryId)).pipe(inWorkspace(wsA))

const replay = (webhookId: string, input: unknown) =>
  Effect.flatMap(service, (s) => s.replay(webhookId, input)).pipe(inWorkspace(wsA))

const scripted = (statuses: ReadonlyArray<number>) => (_: unknown, index: number) =>
  ok(statuses[Math.min(index, statuses.length - 1)]!)

describe("Replay.validate", () => {
  const now = NOW / 1000
  it("accepts a window within retention, with until defaulting to just past now", () => {
    assert.deepStrictEqual(
      Replay.validate({ since: now - 60 }, now),
      Either.right({
        since: now - 60,
        until: now + 1,
        statuses: ["failed"]
      })
    )
    assert.deepStrictEqual(
      Replay.validate({ since: now - 60, until: now - 30, status: "all" }, now),
      Either.right({ since: now - 60, until: now - 30, statuses: ["failed", "succeeded"] })
    )
  })

  it("lists every issue at its path", () => {
    const paths = (input: unknown) =>
      Either.match(Replay.validate(input, now, 3_600), {
        onLeft: (issues) => issues.map((issue) => issue.path),
        onRight: () => []
      })
    assert.deepStrictEqual(paths({ since: now - 3_601 }), ["since"])
    assert.deepStrictEqual(paths({ since: now - 3_600 }), [])
    assert.deepStrictEqual(paths({ since: now - 60, until: now - 60 }), ["until"])
    assert.deepStrictEqual(paths({ since: 1.5, until: "x", status: "pending", other: 1 }), [
      "other",
      "since",
      "until",
      "status"
    ])
    assert.deepStrictEqual(paths(null), [""])
    assert.deepStrictEqual(paths({}), ["since"])
  })

  it("says the retention as it is written; a retention of 0 leaves since without a lower bound", () => {
    assert.deepStrictEqual(
      Replay.validate({ since: now - 121 }, now, 120),
      Either.left([{ path: "since", message: `must not be older than the retention of 2m (${now - 120})` }])
    )
    assert.deepStrictEqual(
      Replay.validate({ since: 0 }, now),
      Either.left([{ path: "since", message: `must not be older than the retention of 30d (${now - 30 * 86_400})` }])
    )
    assert.isTrue(Either.isRight(Replay.validate({ since: 0 }, now, 0)))
  })
})

describe("resend", () => {
  it.effect("a failed delivery gets a fresh manual cycle: attempts 3 and 4, same id and body, one alert", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      yield* settleWithRetry
      const [failed] = yield* deliveriesOf(webhook.id)
      assert.strictEqual(failed!.status, "failed")

      const resent = yield* resend(webhook.id, failed!.id)
      assert.strictEqual(resent.status, "pending")
      assert.strictEqual(resent.attempts.length, 2)
      yield* settleWithRetry
      const [done] = yield* deliveriesOf(webhook.id)
      assert.strictEqual(done!.status, "succeeded")
      assert.deepStrictEqual(
        done!.attempts.map((attempt) => [attempt.statusCode, attempt.trigger]),
        [
          [500, "automatic"],
          [500, "automatic"],
          [500, "manual"],
          [200, "manual"]
        ]
      )
      const sent = yield* requests
      assert.deepStrictEqual(
        sent.map((item) => item.request.headers["X-Delivery-Attempt"]),
        ["1", "2", "3", "4"]
      )
      for (const item of sent) {
        assert.strictEqual(item.request.headers["X-Delivery-Id"], failed!.id)
        assert.strictEqual(item.request.body, sent[0]!.request.body)
      }
      const alerts = yield* Effect.flatMap(service, (s) => s.alerts({ limit: 10 })).pipe(inWorkspace(wsA))
      assert.strictEqual(alerts.data.length, 1)
    }).pipe(Effect.provide(makeLayer({ respond: scripted([500, 500, 500, 200]), dispatcher: { retryDelayMs: 1_000 } })))
  )

  it.effect("a succeeded delivery is sent again; a pending one is a conflict; others are not found", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      yield* Effect.flatMap(Dispatcher, (d) => d.fanOutAll)
      const [pending] = yield* deliveriesOf(webhook.id)
      const conflict = yield* Effect.flip(resend(webhook.id, pending!.id))
      assert.strictEqual(conflict._tag, "DeliveryPending")
      yield* deliverDue
      yield* resend(webhook.id, pending!.id)
      yield* deliverDue
      const [again] = yield* deliveriesOf(webhook.id)
      assert.deepStrictEqual(
        again!.attempts.map((attempt) => attempt.trigger),
        ["automatic", "manual"]
      )
      assert.strictEqual(again!.status, "succeeded")

      assert.strictEqual((yield* Effect.flip(resend(webhook.id, "dlv_unknown")))._tag, "DeliveryNotFound")
      assert.strictEqual((yield* Effect.flip(resend("whk_unknown", pending!.id)))._tag, "WebhookNotFound")
      const foreign = yield* Effect.flip(
        Effect.flatMap(service, (s) => s.resend(webhook.id, pending!.id)).pipe(inWorkspace(wsB))
      )
      assert.strictEqual(foreign._tag, "WebhookNotFound")
      const other = yield* register(registration())
      assert.strictEqual((yield* Effect.flip(resend(other.id, pending!.id)))._tag, "DeliveryNotFound")
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )
})

describe("replay", () => {
  it.effect("resends the failed deliveries of the window in event order, in small steps, each once", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const at = [0, 10, 11, 12, 13, 14, 30]
      const events: Array<string> = []
      for (const offset of at) {
        yield* TestClock.setTime(NOW + offset * 1_000)
        events.push((yield* publish("tour-created", { tour: tour() })).id)
      }
      yield* settleWithRetry
      assert.isTrue((yield* deliveriesOf(webhook.id)).every((delivery) => delivery.status === "failed"))
      const before = (yield* requests).length

      const since = NOW / 1000 + 10
      const result = yield* replay(webhook.id, { since, until: since + 5 })
      assert.deepStrictEqual(result, { deliveries: 5 })
      // Pending already: a second replay finds nothing to resend.
      assert.deepStrictEqual(yield* replay(webhook.id, { since, until: since + 5 }), { deliveries: 0 })
      yield* deliverDue
      const sent = (yield* requests).slice(before)
      assert.deepStrictEqual(
        sent.map((item) => item.request.headers["X-Event-Id"]),
        events.slice(1, 6)
      )
      assert.isTrue(sent.every((item) => item.request.headers["X-Delivery-Attempt"] === "3"))
      const log = yield* deliveriesOf(webhook.id)
      for (const delivery of log) {
        const inside = events.slice(1, 6).includes(delivery.eventId)
        assert.strictEqual(delivery.status, inside ? "succeeded" : "failed")
        assert.strictEqual(delivery.attempts.length, inside ? 3 : 2)
      }
      // status all takes the succeeded ones too.
      assert.deepStrictEqual(yield* replay(webhook.id, { since: NOW / 1000, status: "all" }), { deliveries: 7 })
    }).pipe(
      Effect.provide(
        makeLayer({
          respond: (_, index) => ok(index < 14 ? 500 : 200),
          dispatcher: { retryDelayMs: 1_000, concurrency: 1, perWebhookConcurrency: 1 },
          replayStepSize: 2
        })
      )
    )
  )

  it.effect("works in bounded steps, and another webhook's delivery is not starved by a large replay", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const big = yield* register(registration({ url: "https://hooks.example.org/big" }))
      for (let i = 0; i < 120; i++) yield* publish("tour-created", { tour: tour() })
      yield* settleWithRetry
      const other = yield* register(registration({ url: "https://hooks.example.org/other", events: ["tour-edited"] }))
      const steps: Array<number> = []
      const counted = Effect.map(DeliveryStore, (store) =>
        DeliveryStore.of({
          ...store,
          replayStep: (request) =>
            Effect.tap(store.replayStep(request), () => Effect.sync(() => steps.push(request.limit)))
        })
      )
      const stepping = yield* makeService({ allowPrivateTargets: false, replayStepSize: 50 }).pipe(
        Effect.provideServiceEffect(DeliveryStore, counted)
      )
      const replayed = yield* stepping.replay(big.id, { since: NOW / 1000 }).pipe(inWorkspace(wsA))
      assert.deepStrictEqual(replayed, { deliveries: 120 })
      // 120 deliveries in steps of 50: three steps (the last one short), never all at once.
      assert.deepStrictEqual(steps, [50, 50, 50])
      const before = (yield* requests).length
      yield* publish("tour-edited", { tour: tour() })
      yield* settle
      const sent = (yield* requests).slice(before).map((item) => item.request.url)
      const position = sent.indexOf("https://hooks.example.org/other")
      assert.isTrue(position >= 0, "the other webhook's delivery was sent")
      // The replaying webhook holds at most its per-webhook share of each claim.
      assert.isTrue(position < 8, `the other webhook's delivery went out at position ${position}`)
      assert.strictEqual(sent.length, 121)
      assert.isTrue((yield* deliveriesOf(other.id)).every((delivery) => delivery.status === "succeeded"))
    }).pipe(
      Effect.provide(
        makeLayer({
          respond: (request) =>
            ok(request.url.endsWith("/big") && request.headers["X-Delivery-Attempt"] !== "3" ? 500 : 200),
          dispatcher: { retryDelayMs: 1_000, concurrency: 4, perWebhookConcurrency: 2 }
        })
      )
    )
  )

  it.effect("refuses a window older than the retention or empty, and foreign webhooks", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const tooOld = yield* Effect.flip(replay(webhook.id, { since: NOW / 1000 - 31 * 86_400 }))
      assert.strictEqual(tooOld._tag, "ValidationError")
      const empty = yield* Effect.flip(replay(webhook.id, { since: NOW / 1000, until: NOW / 1000 }))
      assert.strictEqual(empty._tag, "ValidationError")
      const foreign = yield* Effect.flip(
        Effect.flatMap(service, (s) => s.replay(webhook.id, { since: NOW / 1000 })).pipe(inWorkspace(wsB))
      )
      assert.strictEqual(foreign._tag, "WebhookNotFound")
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("reaches back as far as the retention in context (Retention.Window), and without bound for 0", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const now = NOW / 1000
      const tooOld = yield* Effect.flip(replay(webhook.id, { since: now - 121 }))
      assert.strictEqual(tooOld._tag, "ValidationError")
      assert.deepStrictEqual(tooOld._tag === "ValidationError" ? tooOld.issues : [], [
        { path: "since", message: `must not be older than the retention of 2m (${now - 120})` }
      ])
      assert.deepStrictEqual(yield* replay(webhook.id, { since: now - 120 }), { deliveries: 0 })
      const everything = yield* replay(webhook.id, { since: 0 }).pipe(
        Effect.provideService(Retention.Window, { retentionMs: 0 })
      )
      assert.deepStrictEqual(everything, { deliveries: 0 })
    }).pipe(
      Effect.provide(makeLayer({ respond: () => ok() })),
      Effect.provideService(Retention.Window, { retentionMs: 120_000 })
    )
  )
})
