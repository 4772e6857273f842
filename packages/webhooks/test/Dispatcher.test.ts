import { assert, describe, it, vi } from "@effect/vitest"
import * as TraceContext from "@waybill/core/TraceContext"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Authorization from "@waybill/signing/Authorization"
import * as Hmac from "@waybill/signing/Hmac"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import type { Attempt } from "../src/Delivery.js"
import { DeliveryStore } from "../src/DeliveryStore.js"
import { Dispatcher, make, type Options } from "../src/Dispatcher.js"
import { FailureAlerts } from "../src/FailureAlerts.js"
import { SendError, type SendRequest } from "../src/HttpSender.js"
import { OutboxReader } from "../src/OutboxReader.js"
import { WebhookRepository } from "../src/WebhookRepository.js"
import { WebhookService } from "../src/WebhookService.js"
import {
  basicAuth,
  bearerAuth,
  captureLogs,
  deliveriesOf,
  eventually,
  hmacAuth,
  inWorkspace,
  LogLines,
  leakedSecrets,
  makeLayer,
  NOW,
  ok,
  publish,
  register,
  registration,
  renderings,
  requests,
  secrets,
  settle,
  tour,
  wsA,
  wsB
} from "./fixtures.js"

const dispatcher = Dispatcher

const alertsOf = (workspaceId: WorkspaceId = wsA) =>
  Effect.flatMap(WebhookService, (service) => service.alerts({ limit: 100 })).pipe(
    inWorkspace(workspaceId),
    Effect.map((page) => page.data)
  )

// Moves the clock on in small steps, letting the fibers run, until `check` holds.
const advanceUntil = <E, R>(check: Effect.Effect<boolean, E, R>, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 400; i++) {
      if (yield* check) return
      yield* TestClock.adjust(5)
      for (let j = 0; j < 20; j++) yield* Effect.yieldNow()
    }
    assert.fail(`never happened: ${what}`)
  })

// Stopped at each test's end with attempts that may never answer, on a test clock: no grace.
const makeDispatcher = (options: Options) => make({ shutdownGraceMs: 0, ...options })

// Counts the store's writes and claimed rows (and, beside them, the claims made).
const countingStore = Effect.map(DeliveryStore, (store) => {
  const calls = { insert: 0, complete: 0, claimed: 0 }
  const claims = { made: 0 }
  const counting = DeliveryStore.of({
    ...store,
    insert: (deliveries) =>
      Effect.zipRight(
        Effect.sync(() => calls.insert++),
        store.insert(deliveries)
      ),
    complete: (completions) =>
      Effect.zipRight(
        Effect.sync(() => calls.complete++),
        store.complete(completions)
      ),
    claimDue: (request) =>
      Effect.tap(store.claimDue(request), (rows) =>
        Effect.sync(() => {
          calls.claimed += rows.length
          claims.made++
        })
      )
  })
  return { calls, claims, counting }
})

// `run` over the counting store, polling once a minute (so no poll claims during a test).
const countingRun = (options: Options = {}) =>
  Effect.gen(function* () {
    const { calls, claims, counting } = yield* countingStore
    const d = yield* makeDispatcher({ pollIntervalMs: 60_000, ...options }).pipe(
      Effect.provideService(DeliveryStore, counting)
    )
    const fiber = yield* Effect.fork(d.run)
    return { calls, claims, d, fiber }
  })

// `run` on a small loop (4 attempts in flight, 2 per webhook) over the counting store.
const smallCountingRun = countingRun({ concurrency: 4, perWebhookConcurrency: 2 })

const headerNames = (request: SendRequest) => Object.keys(request.headers).sort()

const verified = (request: SendRequest, secret: string) =>
  Hmac.verify({
    secret,
    headers: request.headers,
    rawBody: request.body,
    now: Number(request.headers["X-Signature-Timestamp"])
  })

const scripted = (statuses: ReadonlyArray<number>) => (_: SendRequest, index: number) =>
  ok(statuses[Math.min(index, statuses.length - 1)]!)

describe("Dispatcher", () => {
  it.effect("delivers the stored body unchanged with the contract's headers and a valid HMAC signature", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const event = yield* publish("tour-created", { tour: tour({ prop_region: "opt_north" }) })
      const fanned = yield* Effect.flatMap(dispatcher, (d) => d.fanOutAll)
      assert.deepStrictEqual(fanned, { events: 1, deliveries: 1 })
      const summary = yield* Effect.flatMap(dispatcher, (d) => d.deliverDue)
      assert.deepStrictEqual(summary, { attempts: 1, succeeded: 1, retried: 0, failed: 0 })

      const [sent] = yield* requests
      const request = sent!.request
      assert.strictEqual(request.url, "https://hooks.example.org/waybill")
      assert.strictEqual(request.body, event.body)
      assert.deepStrictEqual(JSON.parse(request.body), {
        id: event.id,
        type: "tour-created",
        createdAt: NOW / 1000,
        payload: { tour: tour({ prop_region: "opt_north" }) }
      })
      assert.deepStrictEqual(headerNames(request), [
        "Content-Type",
        "X-Delivery-Attempt",
        "X-Delivery-Id",
        "X-Event-Id",
        "X-Event-Type",
        "X-Signature",
        "X-Signature-Algorithm",
        "X-Signature-Timestamp",
        "traceparent"
      ])
      // The event's trace, with a span of the attempt's own (contract §8 "Tracing").
      const stored = Option.getOrThrow(TraceContext.parse(event.traceparent))
      const sentTrace = Option.getOrThrow(TraceContext.parse(request.headers.traceparent))
      assert.strictEqual(sentTrace.traceId, stored.traceId)
      assert.notStrictEqual(sentTrace.spanId, stored.spanId)
      const [delivery] = yield* deliveriesOf(webhook.id)
      assert.strictEqual(request.headers["Content-Type"], "application/json")
      assert.strictEqual(request.headers["X-Delivery-Id"], delivery!.id)
      assert.match(delivery!.id, /^dlv_[0-9a-z]{26}$/)
      assert.strictEqual(request.headers["X-Event-Id"], event.id)
      assert.strictEqual(request.headers["X-Event-Type"], "tour-created")
      assert.strictEqual(request.headers["X-Delivery-Attempt"], "1")
      assert.strictEqual(request.headers["X-Signature-Algorithm"], "hmac-sha256")
      assert.strictEqual(request.headers["X-Signature-Timestamp"], String(NOW / 1000))
      assert.strictEqual(request.headers["X-Signature"], Hmac.sign(secrets.hmac, NOW / 1000, event.body))
      assert.isTrue(Either.isRight(verified(request, secrets.hmac)))
      assert.strictEqual(request.timeoutMs, 20_000)

      assert.deepStrictEqual(delivery, {
        id: delivery!.id,
        eventId: event.id,
        eventType: "tour-created",
        status: "succeeded",
        orderingKey: null,
        attempts: [{ at: NOW / 1000, statusCode: 204, durationMs: 0, error: null, trigger: "automatic" }]
      })
      assert.deepStrictEqual(yield* alertsOf(), [])
    }).pipe(Effect.provide(makeLayer({ respond: () => ok(204) })))
  )

  it.effect("sends Basic and Bearer credentials exactly", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const basic = yield* register(registration({ url: "https://basic.example.org/", auth: basicAuth }))
      const bearer = yield* register(registration({ url: "https://bearer.example.org/", auth: bearerAuth }))
      yield* publish("tour-created", { tour: tour() })
      yield* settle
      const sent = (yield* requests).map((received) => received.request)
      const byUrl = (url: string) => sent.find((request) => request.url === url)!
      const basicRequest = byUrl("https://basic.example.org/")
      assert.strictEqual(
        basicRequest.headers.Authorization,
        `Basic ${Buffer.from(`ops:${secrets.password}`, "utf8").toString("base64")}`
      )
      assert.isTrue(Either.isRight(Authorization.verifyBasic(basicRequest.headers, basicAuth)))
      assert.deepStrictEqual(headerNames(basicRequest), [
        "Authorization",
        "Content-Type",
        "X-Delivery-Attempt",
        "X-Delivery-Id",
        "X-Event-Id",
        "X-Event-Type",
        "traceparent"
      ])
      const bearerRequest = byUrl("https://bearer.example.org/")
      assert.strictEqual(bearerRequest.headers.Authorization, `Bearer ${secrets.token}`)
      // One event, two webhooks: the same event id, different delivery ids.
      assert.strictEqual(basicRequest.headers["X-Event-Id"], bearerRequest.headers["X-Event-Id"])
      assert.notStrictEqual(basicRequest.headers["X-Delivery-Id"], bearerRequest.headers["X-Delivery-Id"])
      assert.strictEqual((yield* deliveriesOf(basic.id))[0]!.status, "succeeded")
      assert.strictEqual((yield* deliveriesOf(bearer.id))[0]!.status, "succeeded")
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("500 then 200: two requests, same delivery id, both signed afresh, retry not before the delay", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      assert.deepStrictEqual(yield* settle, { attempts: 1, succeeded: 0, retried: 1, failed: 0 })
      assert.strictEqual((yield* requests).length, 1)

      yield* TestClock.adjust(9_999)
      assert.deepStrictEqual(yield* settle, { attempts: 0, succeeded: 0, retried: 0, failed: 0 })
      assert.strictEqual((yield* requests).length, 1)

      yield* TestClock.adjust(2_001)
      assert.deepStrictEqual(yield* settle, { attempts: 1, succeeded: 1, retried: 0, failed: 0 })
      const [first, second] = yield* requests
      assert.strictEqual(first!.request.headers["X-Delivery-Id"], second!.request.headers["X-Delivery-Id"])
      assert.strictEqual(first!.request.headers["X-Delivery-Attempt"], "1")
      assert.strictEqual(second!.request.headers["X-Delivery-Attempt"], "2")
      assert.strictEqual(first!.request.body, second!.request.body)
      assert.isTrue(second!.at - first!.at >= 10_000 && second!.at - first!.at <= 12_000)
      assert.isTrue(Either.isRight(verified(first!.request, secrets.hmac)))
      assert.isTrue(Either.isRight(verified(second!.request, secrets.hmac)))
      assert.notStrictEqual(
        first!.request.headers["X-Signature-Timestamp"],
        second!.request.headers["X-Signature-Timestamp"]
      )
      const [delivery] = yield* deliveriesOf(webhook.id)
      assert.strictEqual(delivery!.status, "succeeded")
      assert.deepStrictEqual(
        delivery!.attempts.map((attempt: Attempt) => [attempt.statusCode, attempt.error]),
        [
          [500, "http"],
          [200, null]
        ]
      )
      assert.deepStrictEqual(yield* alertsOf(), [])
    }).pipe(Effect.provide(makeLayer({ respond: scripted([500, 200]) })))
  )

  it.effect("500 twice: two requests, the delivery fails and one alert is raised and logged", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const event = yield* publish("tour-created", { tour: tour() })
      yield* settle
      yield* TestClock.adjust("12 seconds")
      assert.deepStrictEqual(yield* settle, { attempts: 1, succeeded: 0, retried: 0, failed: 1 })
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(yield* settle, { attempts: 0, succeeded: 0, retried: 0, failed: 0 })
      assert.strictEqual((yield* requests).length, 2)
      const [delivery] = yield* deliveriesOf(webhook.id)
      assert.strictEqual(delivery!.status, "failed")
      assert.strictEqual(delivery!.attempts.length, 2)
      const alerts = yield* alertsOf()
      assert.strictEqual(alerts.length, 1)
      assert.deepStrictEqual(alerts[0], {
        id: alerts[0]!.id,
        webhookId: webhook.id,
        deliveryId: delivery!.id,
        eventId: event.id,
        eventType: "tour-created",
        reason: "2 attempts failed; last: HTTP 500",
        createdAt: alerts[0]!.createdAt
      })
      assert.match(alerts[0]!.id, /^alr_/)
      const lines = yield* LogLines
      const failed = lines.filter((line) => line.includes('message="Webhook delivery failed"'))
      assert.strictEqual(failed.length, 1)
      assert.include(failed[0]!, `deliveryId=${delivery!.id}`)
      assert.include(failed[0]!, "level=ERROR")
      assert.strictEqual(lines.filter((line) => line.includes("Webhook delivery attempt failed")).length, 2)
    }).pipe(Effect.provide(Layer.merge(makeLayer({ respond: () => ok(500) }), captureLogs)))
  )

  it.effect("a receiver slower than the timeout fails the attempt with error class timeout", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      yield* Effect.flatMap(dispatcher, (d) => d.fanOutAll)
      const first = yield* Effect.fork(Effect.flatMap(dispatcher, (d) => d.deliverDue))
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 1),
        "the first request"
      )
      yield* TestClock.adjust(2_999)
      assert.isTrue(Option.isNone(yield* Fiber.poll(first)))
      yield* TestClock.adjust(1)
      assert.deepStrictEqual(yield* Fiber.join(first), { attempts: 1, succeeded: 0, retried: 1, failed: 0 })
      yield* TestClock.adjust("1 minute")
      const second = yield* Effect.fork(Effect.flatMap(dispatcher, (d) => d.deliverDue))
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 2),
        "the retry"
      )
      yield* TestClock.adjust(3_000)
      assert.deepStrictEqual(yield* Fiber.join(second), { attempts: 1, succeeded: 0, retried: 0, failed: 1 })
      const [delivery] = yield* deliveriesOf(webhook.id)
      assert.deepStrictEqual(delivery!.attempts, [
        { at: NOW / 1000, statusCode: null, durationMs: 3_000, error: "timeout", trigger: "automatic" },
        { at: NOW / 1000 + 63, statusCode: null, durationMs: 3_000, error: "timeout", trigger: "automatic" }
      ])
      const [alert] = yield* alertsOf()
      assert.strictEqual(alert!.reason, "2 attempts failed; last: timeout: No response within 3000 ms")
    }).pipe(Effect.provide(makeLayer({ respond: () => Effect.never, dispatcher: { timeoutMs: 3_000 } })))
  )

  it.effect("a redirect is a failure of class http, never followed; sender errors keep their class", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const redirected = yield* register(registration({ url: "https://redirect.example.org/" }))
      const refused = yield* register(registration({ url: "https://refused.example.org/" }))
      yield* publish("tour-created", { tour: tour() })
      yield* settle
      const sent = yield* requests
      assert.strictEqual(sent.length, 2)
      assert.deepStrictEqual(
        (yield* deliveriesOf(redirected.id))[0]!.attempts.map((attempt) => [attempt.statusCode, attempt.error]),
        [[302, "http"]]
      )
      assert.deepStrictEqual(
        (yield* deliveriesOf(refused.id))[0]!.attempts.map((attempt) => [attempt.statusCode, attempt.error]),
        [[null, "connect"]]
      )
    }).pipe(
      Effect.provide(
        makeLayer({
          respond: (request) =>
            request.url.startsWith("https://redirect.")
              ? ok(302)
              : Effect.fail(new SendError({ reason: "connect", message: "connect ECONNREFUSED 203.0.113.1:443" }))
        })
      )
    )
  )

  describe("filters", () => {
    it.effect("decide exactly which webhooks receive which events; a filtered-out event leaves nothing", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const north = yield* register(
          registration({
            url: "https://north.example.org/",
            filters: {
              "tour-created": {
                conditions: [{ field: "tour.properties.prop_region", operator: "is", value: "opt_north" }]
              }
            }
          })
        )
        const notFragile = yield* register(
          registration({
            url: "https://careful.example.org/",
            filters: {
              "tour-created": {
                conditions: [{ field: "tour.properties.prop_note", operator: "not_contains", value: "fragile" }]
              }
            }
          })
        )
        const newYear = yield* register(
          registration({
            url: "https://newyear.example.org/",
            filters: {
              "tour-created": {
                conditions: [{ field: "tour.properties.prop_due", operator: "on", value: "2027-01-01" }]
              }
            }
          })
        )
        const everything = yield* register(registration({ url: "https://all.example.org/" }))
        const seconds = (iso: string) => Date.parse(iso) / 1000
        const events = [
          // Berlin: 2027-01-01 00:30 (CET), although still 2026-12-31 in UTC.
          { prop_region: "opt_north", prop_due: seconds("2026-12-31T23:30:00Z") },
          // Berlin: 2027-01-02 00:30; note contains "fragile".
          { prop_region: "opt_south", prop_note: "fragile glass", prop_due: seconds("2027-01-01T23:30:00Z") },
          // Berlin: 2026-12-31 23:59; note present without "fragile".
          { prop_note: "sturdy", prop_due: seconds("2026-12-31T22:59:00Z") },
          // Berlin 2027-01-01 as an ISO string; note contains "fragile".
          { prop_region: "opt_north", prop_note: "very fragile", prop_due: "2027-01-01T12:00:00+01:00" }
        ]
        const published: Array<string> = []
        for (const properties of events) {
          published.push((yield* publish("tour-created", { tour: tour(properties) })).id)
        }
        assert.deepStrictEqual(yield* Effect.flatMap(dispatcher, (d) => d.fanOutAll), { events: 4, deliveries: 10 })
        yield* Effect.flatMap(dispatcher, (d) => d.deliverDue)
        const received = (webhookId: string) =>
          Effect.map(deliveriesOf(webhookId), (deliveries) =>
            deliveries.map((delivery) => published.indexOf(delivery.eventId)).sort()
          )
        assert.deepStrictEqual(yield* received(north.id), [0, 3])
        // The negated text condition matches where the note is missing.
        assert.deepStrictEqual(yield* received(notFragile.id), [0, 2])
        assert.deepStrictEqual(yield* received(newYear.id), [0, 3])
        assert.deepStrictEqual(yield* received(everything.id), [0, 1, 2, 3])
        const sent = yield* requests
        assert.strictEqual(sent.length, 10)
        assert.strictEqual(sent.filter((received) => received.request.url === "https://north.example.org/").length, 2)
        assert.deepStrictEqual(yield* alertsOf(), [])
      }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
    )

    it.effect("on callout-action-created without a tour, tour conditions are false, negated ones too", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const webhook = yield* register(
          registration({
            events: ["callout-action-created"],
            filters: {
              "callout-action-created": {
                conditions: [{ field: "tour.properties.prop_region", operator: "is_not", value: "opt_south" }]
              }
            }
          })
        )
        const action = {
          id: "act_1",
          payload: { type: "bid" },
          createdAt: 1_798_000_000_123,
          createdAtMilliseconds: 1_798_000_000_123
        }
        yield* publish("callout-action-created", { callouts: [], action })
        const withTour = yield* publish("callout-action-created", {
          callouts: [],
          action,
          tour: { id: "tour_1", properties: { prop_region: "opt_north" } }
        })
        yield* settle
        assert.deepStrictEqual(
          (yield* deliveriesOf(webhook.id)).map((delivery) => delivery.eventId),
          [withTour.id]
        )
      }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
    )

    it.effect("parses each event's payload once, however many filtered webhooks it reaches", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        for (const region of ["opt_north", "opt_south", "opt_north"]) {
          yield* register(
            registration({
              filters: {
                "tour-created": {
                  conditions: [{ field: "tour.properties.prop_region", operator: "is", value: region }]
                }
              }
            })
          )
        }
        yield* publish("tour-created", { tour: tour({ prop_region: "opt_north" }) })
        const parse = vi.spyOn(JSON, "parse")
        let calls = -1
        const fanned = yield* Effect.flatMap(dispatcher, (d) => d.fanOutAll).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              calls = parse.mock.calls.length
              parse.mockRestore()
            })
          )
        )
        assert.strictEqual(calls, 1)
        assert.deepStrictEqual(fanned, { events: 1, deliveries: 2 })
      }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
    )
  })

  it.effect("one slow receiver cannot stall the others", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const slow = yield* register(registration({ url: "https://slow.example.org/" }))
      const fast = yield* register(registration({ url: "https://fast.example.org/" }))
      for (let i = 0; i < 10; i++) yield* publish("tour-created", { tour: tour() })
      yield* Effect.flatMap(dispatcher, (d) => d.fanOutAll)
      const fiber = yield* Effect.fork(Effect.flatMap(dispatcher, (d) => d.deliverDue))
      // The clock does not move: every slow attempt is still waiting for its answer.
      yield* eventually(
        Effect.map(deliveriesOf(fast.id), (deliveries) =>
          deliveries.every((delivery) => delivery.status === "succeeded")
        ),
        "the fast receiver got all its deliveries"
      )
      const sent = yield* requests
      assert.strictEqual(sent.filter((received) => received.request.url === "https://fast.example.org/").length, 10)
      assert.strictEqual(sent.filter((received) => received.request.url === "https://slow.example.org/").length, 2)
      assert.isTrue((yield* deliveriesOf(slow.id)).every((delivery) => delivery.attempts.length === 0))
      yield* Fiber.interrupt(fiber)
    }).pipe(
      Effect.provide(
        makeLayer({
          respond: (request) => (request.url.startsWith("https://slow.") ? Effect.never : ok()),
          dispatcher: { concurrency: 4, perWebhookConcurrency: 2 }
        })
      )
    )
  )

  it.effect("keeps at most `concurrency` attempts in flight", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* register(registration())
      for (let i = 0; i < 10; i++) yield* publish("tour-created", { tour: tour() })
      yield* Effect.flatMap(dispatcher, (d) => d.fanOutAll)
      const fiber = yield* Effect.fork(Effect.flatMap(dispatcher, (d) => d.deliverDue))
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 3),
        "three requests"
      )
      for (let i = 0; i < 50; i++) yield* Effect.yieldNow()
      assert.strictEqual((yield* requests).length, 3)
      yield* TestClock.adjust("20 seconds")
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 6),
        "three more requests"
      )
      yield* Fiber.interrupt(fiber)
    }).pipe(
      Effect.provide(
        makeLayer({ respond: () => Effect.never, dispatcher: { concurrency: 3, perWebhookConcurrency: 3 } })
      )
    )
  )

  it.effect("run takes the deliveries it fans out itself, leased as they are made, without a claim", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const { calls, counting } = yield* countingStore
      const own = yield* makeDispatcher({ pollIntervalMs: 60_000 }).pipe(Effect.provideService(DeliveryStore, counting))
      const other = yield* makeDispatcher({})
      const fiber = yield* Effect.fork(own.run)
      for (let i = 0; i < 3; i++) yield* publish("tour-created", { tour: tour() })
      yield* own.wake
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 3),
        "three attempts in flight"
      )
      assert.strictEqual(calls.claimed, 0)
      // The receiver has not answered yet: the deliveries are recorded leased once their time
      // is up, and nobody else may send them.
      yield* TestClock.adjust(200)
      assert.strictEqual((yield* deliveriesOf(webhook.id)).length, 3)
      assert.deepStrictEqual(yield* other.deliverDue, { attempts: 0, succeeded: 0, retried: 0, failed: 0 })
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(makeLayer({ respond: () => Effect.never })))
  )

  it.effect("run records a fresh delivery once, with the result of its first attempt: no update, no claim", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const { calls, d, fiber } = yield* countingRun()
      const events = [
        yield* publish("tour-created", { tour: tour() }),
        yield* publish("tour-created", { tour: tour() }),
        yield* publish("tour-created", { tour: tour() })
      ]
      yield* d.wake
      yield* eventually(
        Effect.map(deliveriesOf(webhook.id), (deliveries) => deliveries.length === 3),
        "three deliveries recorded"
      )
      const recorded = yield* deliveriesOf(webhook.id)
      assert.deepStrictEqual(
        recorded.map((delivery) => [delivery.eventId, delivery.status, delivery.attempts.length]).sort(),
        events.map((event) => [event.id, "succeeded", 1]).sort()
      )
      assert.deepStrictEqual(calls, { insert: 1, complete: 0, claimed: 0 })
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect(
    "run claims nothing when its loop empties: fresh deliveries come by hand-over, retries by their timers",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const webhook = yield* register(registration())
        const { claims, d, fiber } = yield* countingRun()
        yield* eventually(
          Effect.sync(() => claims.made === 1),
          "the first claim"
        )
        // One event at a time, each attempted and recorded before the next: the loop empties each time.
        for (let i = 1; i <= 3; i++) {
          yield* publish("tour-created", { tour: tour() })
          yield* d.wake
          yield* eventually(
            Effect.map(requests, (sent) => sent.length === i),
            `attempt ${i}`
          )
          yield* TestClock.adjust(200)
          yield* eventually(
            Effect.map(deliveriesOf(webhook.id), (deliveries) => deliveries.length === i),
            `delivery ${i} recorded`
          )
        }
        assert.strictEqual(claims.made, 1)
        yield* Fiber.interrupt(fiber)
      }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("run: a slow receiver's fresh deliveries go to storage once it stays full; the others' go on", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const slow = yield* register(registration({ url: "https://slow.example.org/" }))
      const fast = yield* register(registration({ url: "https://fast.example.org/" }))
      const d = yield* dispatcher
      const fiber = yield* Effect.fork(d.run)
      for (let i = 0; i < 10; i++) yield* publish("tour-created", { tour: tour() })
      yield* d.wake
      // The slow receiver never answers: the fast one waits at most the patience (100 ms).
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust(100)
        for (let j = 0; j < 50; j++) yield* Effect.yieldNow()
      }
      yield* eventually(
        Effect.map(
          deliveriesOf(fast.id),
          (deliveries) => deliveries.length === 10 && deliveries.every((delivery) => delivery.status === "succeeded")
        ),
        "the fast receiver got all its deliveries"
      )
      const sent = yield* requests
      assert.strictEqual(sent.filter((received) => received.request.url === "https://fast.example.org/").length, 10)
      assert.strictEqual(sent.filter((received) => received.request.url === "https://slow.example.org/").length, 2)
      const slowDeliveries = yield* deliveriesOf(slow.id)
      assert.strictEqual(slowDeliveries.length, 10)
      assert.isTrue(slowDeliveries.every((delivery) => delivery.status === "pending"))
      yield* Fiber.interrupt(fiber)
    }).pipe(
      Effect.provide(
        makeLayer({
          respond: (request) => (request.url.startsWith("https://slow.") ? Effect.never : ok()),
          dispatcher: { concurrency: 4, perWebhookConcurrency: 2, pollIntervalMs: 60_000 }
        })
      )
    )
  )

  // The busy receiver answers after 10 ms: with 2 at a time it is kept busy, yet 20 of its
  // attempts end per 100 ms, far more than a slow one's.
  const busy = (request: SendRequest) =>
    request.url.startsWith("https://busy.") ? Effect.zipRight(Effect.sleep(10), ok()) : ok()

  it.effect("run: a busy receiver that keeps pace, with nobody behind it, is not stored: one write each", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration({ url: "https://busy.example.org/" }))
      const { calls, d, fiber } = yield* smallCountingRun
      for (let i = 0; i < 20; i++) yield* publish("tour-created", { tour: tour() })
      yield* d.wake
      // It holds the fan-out back for far longer than the patience (100 ms), but keeps pace.
      yield* advanceUntil(
        Effect.map(
          deliveriesOf(webhook.id),
          (deliveries) => deliveries.length === 20 && deliveries.every((delivery) => delivery.status === "succeeded")
        ),
        "every delivery succeeded"
      )
      assert.strictEqual(calls.claimed, 0)
      assert.strictEqual(calls.complete, 0)
      assert.strictEqual((yield* requests).length, 20)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(makeLayer({ respond: busy })))
  )

  it.effect("run: with room to spare, a busy receiver is handed up to 4× its concurrency: half the reads", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration({ url: "https://busy.example.org/" }))
      const outbox = yield* OutboxReader
      let reads = 0
      const counting = OutboxReader.of({
        ...outbox,
        read: (position, limit) =>
          Effect.zipRight(
            Effect.sync(() => reads++),
            outbox.read(position, limit)
          )
      })
      const d = yield* makeDispatcher({ concurrency: 8, perWebhookConcurrency: 2, pollIntervalMs: 60_000 }).pipe(
        Effect.provideService(OutboxReader, counting)
      )
      const fiber = yield* Effect.fork(d.run)
      for (let i = 0; i < 48; i++) yield* publish("tour-created", { tour: tour() })
      yield* d.wake
      yield* advanceUntil(
        Effect.map(requests, (sent) => sent.length === 48),
        "every delivery sent"
      )
      // It holds up to 8 (2 in flight), and fan-out reads again once it is down to 4: about a
      // read per 4 events; at 2 × its concurrency, it would be one per 2.
      assert.isAtMost(reads, 16)
      yield* advanceUntil(
        Effect.map(deliveriesOf(webhook.id), (deliveries) =>
          deliveries.every((delivery) => delivery.status === "succeeded")
        ),
        "every delivery recorded"
      )
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(makeLayer({ respond: busy })))
  )

  it.effect("run: a busy receiver's deliveries are stored when another webhook's delivery waits behind them", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const busyHook = yield* register(registration({ url: "https://busy.example.org/" }))
      const other = yield* register(
        registration({
          url: "https://other.example.org/",
          filters: {
            "tour-created": {
              conditions: [{ field: "tour.properties.prop_region", operator: "is", value: "opt_north" }]
            }
          }
        })
      )
      const { calls, d, fiber } = yield* smallCountingRun
      for (let i = 0; i < 60; i++) yield* publish("tour-created", { tour: tour() })
      yield* publish("tour-created", { tour: tour({ prop_region: "opt_north" }) })
      yield* d.wake
      yield* advanceUntil(
        Effect.map(deliveriesOf(other.id), (deliveries) => deliveries[0]?.status === "succeeded"),
        "the other webhook got its delivery"
      )
      // It did not wait for the busy receiver's 61 (31 rounds of 10 ms at 2 at a time).
      const busyDone = (yield* deliveriesOf(busyHook.id)).filter((delivery) => delivery.status === "succeeded")
      assert.isBelow(busyDone.length, 40)
      yield* advanceUntil(
        Effect.map(
          deliveriesOf(busyHook.id),
          (deliveries) => deliveries.length === 61 && deliveries.every((delivery) => delivery.status === "succeeded")
        ),
        "the busy receiver got all its deliveries, from storage"
      )
      assert.isAbove(calls.claimed, 0)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(makeLayer({ respond: busy })))
  )

  it.effect("run: a receiver stored while slow goes back to one write each once it keeps pace, in order", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration({ url: "https://busy.example.org/" }))
      const { calls, d, fiber } = yield* smallCountingRun
      // Events come faster (300/s) than the receiver takes them (200/s): a backlog throughout.
      const published: Array<string> = []
      for (let round = 0; round < 100; round++) {
        for (let i = 0; i < 6; i++) published.push((yield* publish("tour-created", { tour: tour() })).id)
        yield* d.wake
        yield* TestClock.adjust(20)
        for (let j = 0; j < 20; j++) yield* Effect.yieldNow()
      }
      yield* advanceUntil(
        Effect.map(requests, (sent) => sent.length === 600),
        "every delivery sent"
      )
      yield* advanceUntil(
        Effect.map(deliveriesOf(webhook.id), (latest) => latest.every((delivery) => delivery.status === "succeeded")),
        "the latest deliveries recorded as succeeded"
      )
      // Its first answers took 300 ms, so it was found slow and stored; once it kept pace, what
      // was stored drained and the rest went back to one write each.
      assert.isAbove(calls.claimed, 0)
      assert.isBelow(calls.claimed, 300)
      assert.deepStrictEqual(
        (yield* requests).map((received) => received.request.headers["X-Event-Id"]),
        published
      )
      yield* Fiber.interrupt(fiber)
    }).pipe(
      Effect.provide(makeLayer({ respond: (_, index) => Effect.zipRight(Effect.sleep(index < 4 ? 300 : 10), ok()) }))
    )
  )

  it.effect("a claim waiting for a slot keeps its lease by renewal: nobody else takes it, and it is sent once", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      yield* publish("tour-created", { tour: tour() })
      const d = yield* dispatcher
      const other = yield* makeDispatcher({})
      yield* d.fanOutAll
      // One slot: the second claimed delivery waits 20 s behind the first (which times out),
      // more than three 6 s leases; renewals every 2 s keep it.
      const fiber = yield* Effect.fork(d.deliverDue)
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 1),
        "the first attempt"
      )
      for (let i = 0; i < 9; i++) {
        yield* TestClock.adjust(2_000)
        assert.strictEqual((yield* other.deliverDue).attempts, 0, `nobody else takes it (${2 * (i + 1)} s)`)
      }
      yield* TestClock.adjust(2_000)
      assert.deepStrictEqual(yield* Fiber.join(fiber), { attempts: 2, succeeded: 1, retried: 1, failed: 0 })
      const [first, second] = yield* requests
      assert.notStrictEqual(first!.request.headers["X-Delivery-Id"], second!.request.headers["X-Delivery-Id"])
      assert.strictEqual(second!.request.headers["X-Delivery-Attempt"], "1")
      const deliveries = yield* deliveriesOf(webhook.id)
      assert.deepStrictEqual(deliveries.map((delivery) => delivery.attempts.length).sort(), [1, 1])
    }).pipe(
      Effect.provide(
        makeLayer({
          respond: (_, index) => (index === 0 ? Effect.never : ok()),
          dispatcher: { concurrency: 1, perWebhookConcurrency: 1, leaseMs: 6_000 }
        })
      )
    )
  )

  it.effect("a claim whose lease could not be renewed is not started; it is claimed again once the lease ran out", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      yield* publish("tour-created", { tour: tour() })
      const store = yield* DeliveryStore
      // Renewals find nothing, as when another process took the claims after a long pause.
      const d = yield* makeDispatcher({ concurrency: 1, perWebhookConcurrency: 1, leaseMs: 6_000 }).pipe(
        Effect.provideService(DeliveryStore, DeliveryStore.of({ ...store, renew: () => Effect.succeed([]) }))
      )
      yield* d.fanOutAll
      const fiber = yield* Effect.fork(d.deliverDue)
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 1),
        "the first attempt"
      )
      // At 20 s the first times out; the second, its lease gone since 6 s, is claimed afresh.
      yield* TestClock.adjust(20_000)
      assert.deepStrictEqual(yield* Fiber.join(fiber), { attempts: 2, succeeded: 1, retried: 1, failed: 0 })
      const lines = yield* LogLines
      assert.isTrue(lines.some((line) => line.includes("lease ran out before its attempt")))
      const [, second] = yield* requests
      assert.strictEqual(second!.request.headers["X-Delivery-Attempt"], "1")
      const deliveries = yield* deliveriesOf(webhook.id)
      assert.deepStrictEqual(deliveries.map((delivery) => delivery.attempts.length).sort(), [1, 1])
    }).pipe(
      Effect.provide(
        Layer.merge(makeLayer({ respond: (_, index) => (index === 0 ? Effect.never : ok()) }), captureLogs)
      )
    )
  )

  it.effect("a stopped run writes the results it gathered and had not written yet", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const store = yield* DeliveryStore
      let writes = 0
      // The first update never ends: the third result waits behind it when the run stops.
      const stalling = DeliveryStore.of({
        ...store,
        complete: (completions) => (++writes === 1 ? Effect.never : store.complete(completions))
      })
      const d = yield* makeDispatcher({ pollIntervalMs: 60_000, recordDelayMs: 100 }).pipe(
        Effect.provideService(DeliveryStore, stalling)
      )
      const fiber = yield* Effect.fork(d.run)
      const first = yield* publish("tour-created", { tour: tour() })
      const second = yield* publish("tour-created", { tour: tour() })
      const third = yield* publish("tour-created", { tour: tour() })
      yield* d.wake
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 3),
        "three attempts"
      )
      // At 100 ms the batch is recorded: the first with its result, the others in flight.
      yield* TestClock.adjust(500)
      yield* eventually(
        Effect.sync(() => writes === 1),
        "the second result being written"
      )
      yield* TestClock.adjust(500)
      for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      const byEvent = new Map((yield* deliveriesOf(webhook.id)).map((delivery) => [delivery.eventId, delivery]))
      assert.strictEqual(byEvent.get(first.id)?.status, "succeeded")
      assert.deepStrictEqual(byEvent.get(second.id)?.attempts, [])
      assert.strictEqual(byEvent.get(third.id)?.status, "succeeded")
    }).pipe(
      Effect.provide(
        makeLayer({
          respond: (_, index) => (index === 0 ? ok() : Effect.zipRight(Effect.sleep(index * 500), ok()))
        })
      )
    )
  )

  it.effect("a stopped run records its fresh deliveries with the results in so far and frees the rest", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const store = yield* DeliveryStore
      let inserts = 0
      // Recording the batch never ends; the stop records it anew.
      const stalling = DeliveryStore.of({
        ...store,
        insert: (deliveries) => (++inserts === 1 ? Effect.never : store.insert(deliveries))
      })
      const d = yield* makeDispatcher({ pollIntervalMs: 60_000, recordDelayMs: 100 }).pipe(
        Effect.provideService(DeliveryStore, stalling)
      )
      const fiber = yield* Effect.fork(d.run)
      const done = yield* publish("tour-created", { tour: tour() })
      const cut = yield* publish("tour-created", { tour: tour() })
      yield* d.wake
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 2),
        "both attempts"
      )
      yield* TestClock.adjust(200)
      yield* eventually(
        Effect.sync(() => inserts === 1),
        "the batch being recorded"
      )
      yield* Fiber.interrupt(fiber)
      const byEvent = new Map((yield* deliveriesOf(webhook.id)).map((delivery) => [delivery.eventId, delivery]))
      assert.strictEqual(byEvent.get(done.id)?.status, "succeeded")
      assert.deepStrictEqual(
        byEvent.get(done.id)?.attempts.map((attempt) => attempt.statusCode),
        [200]
      )
      assert.strictEqual(byEvent.get(cut.id)?.status, "pending")
      assert.deepStrictEqual(byEvent.get(cut.id)?.attempts, [])
      // The lease is released and the position stored: nothing to fan out again, and the
      // delivery cut short is sent at once, with its id.
      assert.deepStrictEqual(yield* d.fanOutAll, { events: 0, deliveries: 0 })
      assert.deepStrictEqual(yield* d.deliverDue, { attempts: 1, succeeded: 1, retried: 0, failed: 0 })
      const sent = yield* requests
      assert.strictEqual(sent.length, 3)
      assert.strictEqual(sent[2]!.request.headers["X-Delivery-Id"], byEvent.get(cut.id)?.id)
    }).pipe(
      Effect.provide(
        makeLayer({ respond: (_, index) => (index === 1 ? Effect.zipRight(Effect.sleep(10_000), ok()) : ok()) })
      )
    )
  )

  it.effect("isolates workspaces: events reach only their workspace's webhooks", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const inA = yield* register(registration({ url: "https://a.example.org/" }))
      const inB = yield* register(registration({ url: "https://b.example.org/" }), wsB)
      const fromA = yield* publish("tour-created", { tour: tour() })
      const fromB = yield* publish("tour-created", { tour: tour() }, wsB)
      yield* settle
      assert.deepStrictEqual(
        (yield* deliveriesOf(inA.id)).map((delivery) => delivery.eventId),
        [fromA.id]
      )
      assert.deepStrictEqual(
        (yield* deliveriesOf(inB.id, wsB)).map((delivery) => delivery.eventId),
        [fromB.id]
      )
      const sent = yield* requests
      assert.deepStrictEqual(
        sent.map((received) => [received.request.url, received.request.headers["X-Event-Id"]]).sort(),
        [
          ["https://a.example.org/", fromA.id],
          ["https://b.example.org/", fromB.id]
        ]
      )
      assert.deepStrictEqual(yield* alertsOf(wsA), [])
      assert.deepStrictEqual(yield* alertsOf(wsB), [])
      yield* TestClock.adjust("1 minute")
      yield* settle
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("deleting a webhook removes its pending deliveries", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      yield* Effect.flatMap(dispatcher, (d) => d.fanOutAll)
      yield* Effect.flatMap(WebhookService, (service) => service.delete(webhook.id)).pipe(inWorkspace(wsA))
      assert.deepStrictEqual(yield* Effect.flatMap(dispatcher, (d) => d.deliverDue), {
        attempts: 0,
        succeeded: 0,
        retried: 0,
        failed: 0
      })
      assert.strictEqual((yield* requests).length, 0)
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("two dispatchers on one store deliver each delivery once", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* register(registration({ url: "https://one.example.org/" }))
      yield* register(registration({ url: "https://two.example.org/" }))
      for (let i = 0; i < 20; i++) yield* publish("tour-created", { tour: tour() })
      const first = yield* makeDispatcher({ concurrency: 4 })
      const second = yield* makeDispatcher({ concurrency: 4 })
      const fanned = yield* Effect.all([first.fanOutAll, second.fanOutAll], { concurrency: 2 })
      assert.strictEqual(fanned[0].deliveries + fanned[1].deliveries, 40)
      const [a, b] = yield* Effect.all([first.deliverDue, second.deliverDue], { concurrency: 2 })
      assert.strictEqual(a.succeeded + b.succeeded, 40)
      assert.isTrue(a.succeeded > 0 && b.succeeded > 0)
      const ids = (yield* requests).map((received) => received.request.headers["X-Delivery-Id"])
      assert.strictEqual(ids.length, 40)
      assert.strictEqual(new Set(ids).size, 40)
    }).pipe(Effect.provide(makeLayer({ respond: () => Effect.zipRight(Effect.yieldNow(), ok()) })))
  )

  it.effect("a crashed dispatcher's lease expires and the delivery is sent again with the same id", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      const store = yield* DeliveryStore
      // A crash gives nothing back: its claims stay until their lease runs out.
      const crashing = yield* makeDispatcher({ timeoutMs: 20_000, leaseMs: 30_000 }).pipe(
        Effect.provideService(DeliveryStore, DeliveryStore.of({ ...store, releaseClaims: () => Effect.succeed(0) }))
      )
      const survivor = yield* makeDispatcher({ timeoutMs: 20_000, leaseMs: 30_000 })
      yield* crashing.fanOutAll
      const fiber = yield* Effect.fork(crashing.deliverDue)
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 1),
        "the first request"
      )
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual((yield* survivor.deliverDue).attempts, 0)
      yield* TestClock.adjust(29_999)
      assert.deepStrictEqual((yield* survivor.deliverDue).attempts, 0)
      yield* TestClock.adjust(1)
      assert.deepStrictEqual(yield* survivor.deliverDue, { attempts: 1, succeeded: 1, retried: 0, failed: 0 })
      const [lost, again] = yield* requests
      assert.strictEqual(lost!.request.headers["X-Delivery-Id"], again!.request.headers["X-Delivery-Id"])
      assert.strictEqual(again!.request.headers["X-Delivery-Attempt"], "1")
      const [delivery] = yield* deliveriesOf(webhook.id)
      assert.deepStrictEqual(delivery!.status, "succeeded")
      assert.strictEqual(delivery!.attempts.length, 1)
    }).pipe(Effect.provide(makeLayer({ respond: (_, index) => (index === 0 ? Effect.never : ok()) })))
  )

  it.effect("renewals that fail are said once, not every third of a lease", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      const store = yield* DeliveryStore
      const d = yield* makeDispatcher({ leaseMs: 6_000 }).pipe(
        Effect.provideService(
          DeliveryStore,
          DeliveryStore.of({ ...store, renew: () => Effect.die(new Error("the database went away")) })
        )
      )
      yield* d.fanOutAll
      const fiber = yield* Effect.fork(d.deliverDue)
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 1),
        "the attempt"
      )
      // Five renewal periods while the attempt waits for its answer.
      for (let i = 0; i < 5; i++) yield* TestClock.adjust(2_000)
      const said = (yield* LogLines).filter((line) => line.includes("Leases could not be renewed"))
      assert.strictEqual(said.length, 1)
      yield* Fiber.interrupt(fiber)
    }).pipe(
      Effect.provide(
        Layer.merge(makeLayer({ respond: () => Effect.never, dispatcher: { timeoutMs: 60_000 } }), captureLogs)
      )
    )
  )

  it.effect("a stopped dispatcher gives its claims back: another takes them at once, the attempt numbered on", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      yield* publish("tour-created", { tour: tour() })
      const stopping = yield* makeDispatcher({ concurrency: 1, perWebhookConcurrency: 1 })
      const other = yield* makeDispatcher({})
      yield* stopping.fanOutAll
      const fiber = yield* Effect.fork(stopping.deliverDue)
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 1),
        "the first request"
      )
      // One attempt cut short, one claim not started: both released, not left to their leases.
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(yield* other.deliverDue, { attempts: 2, succeeded: 2, retried: 0, failed: 0 })
      const sent = yield* requests
      const cut = sent[0]!.request.headers
      const again = sent.slice(1).find((item) => item.request.headers["X-Delivery-Id"] === cut["X-Delivery-Id"])!
      assert.strictEqual(again.request.headers["X-Delivery-Attempt"], "2")
      const waited = sent.slice(1).find((item) => item.request.headers["X-Delivery-Id"] !== cut["X-Delivery-Id"])!
      assert.strictEqual(waited.request.headers["X-Delivery-Attempt"], "1")
      const deliveries = yield* deliveriesOf(webhook.id)
      assert.deepStrictEqual(
        deliveries.map((delivery) => [delivery.status, delivery.attempts.length]),
        [
          ["succeeded", 1],
          ["succeeded", 1]
        ]
      )
    }).pipe(Effect.provide(makeLayer({ respond: (_, index) => (index === 0 ? Effect.never : ok()) })))
  )

  it.effect("a store ignores the completion of a dispatcher whose lease was taken over", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      yield* Effect.flatMap(dispatcher, (d) => d.fanOutAll)
      const store = yield* DeliveryStore
      const claim = (now: number, leaseToken: string) =>
        store.claimDue({
          now,
          limit: 10,
          maxPerWebhook: 10,
          roomByWebhook: new Map(),
          leaseUntil: now + 1_000,
          leaseToken
        })
      const [first] = yield* claim(NOW, "token-1")
      assert.strictEqual((yield* claim(NOW + 999, "token-x")).length, 0)
      const [second] = yield* claim(NOW + 1_000, "token-2")
      assert.strictEqual(second!.id, first!.id)
      const attempt = { at: NOW / 1000, statusCode: 200, durationMs: 5, error: null, trigger: "automatic" as const }
      const completion = (leaseToken: string) => ({
        deliveryId: first!.id,
        leaseToken,
        attempt,
        status: "succeeded" as const,
        retryAt: null
      })
      assert.deepStrictEqual(yield* store.complete([completion("token-1")]), [])
      assert.deepStrictEqual(yield* store.complete([completion("token-2")]), [first!.id])
      assert.deepStrictEqual(yield* store.complete([completion("token-2")]), [])
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("a secret that does not open sends nothing, records nothing and is logged", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const created = yield* register(registration())
      const repository = yield* WebhookRepository
      const stored = Option.getOrThrow(yield* repository.get(wsA, created.id))
      // The same sealed secret moved to another webhook id does not open there.
      yield* repository.delete(wsA, created.id)
      yield* repository.insert({ ...stored, id: "whk_00000000000000000000000000" }, 100)
      yield* publish("tour-created", { tour: tour() })
      assert.deepStrictEqual(yield* settle, { attempts: 0, succeeded: 0, retried: 0, failed: 0 })
      assert.strictEqual((yield* requests).length, 0)
      const [delivery] = yield* deliveriesOf("whk_00000000000000000000000000")
      assert.deepStrictEqual([delivery!.status, delivery!.attempts], ["pending", []])
      const lines = yield* LogLines
      assert.isTrue(lines.some((line) => line.includes("A webhook secret does not open")))
    }).pipe(Effect.provide(Layer.merge(makeLayer({ respond: () => ok() }), captureLogs)))
  )

  it.effect("run: wakes on publish, retries at the retry time, stops when interrupted", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const webhook = yield* register(registration())
      const d = yield* dispatcher
      const fiber = yield* Effect.fork(d.run)
      yield* publish("tour-created", { tour: tour() })
      yield* d.wake
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 1),
        "the first attempt"
      )
      yield* TestClock.adjust(12_000)
      yield* eventually(
        Effect.map(requests, (sent) => sent.length === 2),
        "the retry"
      )
      yield* eventually(
        Effect.map(deliveriesOf(webhook.id), (deliveries) => deliveries[0]?.status === "succeeded"),
        "the delivery succeeded"
      )
      yield* Fiber.interrupt(fiber)
      const [first, second] = yield* requests
      assert.isTrue(second!.at - first!.at >= 10_000)
    }).pipe(Effect.provide(makeLayer({ respond: scripted([503, 200]), dispatcher: { pollIntervalMs: 60_000 } })))
  )

  it.effect("no secret appears in any response, error, stored value or log line", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const texts: Array<string> = []
      const keep = <A, E, R>(self: Effect.Effect<A, E, R>) =>
        Effect.tap(
          Effect.tapError(self, (error) => Effect.sync(() => texts.push(...renderings(error)))),
          (value) => Effect.sync(() => texts.push(...renderings(value)))
        )
      const service = yield* WebhookService
      const created = [
        yield* keep(register(registration({ auth: hmacAuth }))),
        yield* keep(register(registration({ auth: basicAuth }))),
        yield* keep(register(registration({ auth: bearerAuth })))
      ]
      // Invalid registrations that carry the secrets in the wrong places.
      yield* Effect.either(
        keep(
          register(
            registration({
              url: `https://user:${secrets.password}@hooks.example.org/`,
              auth: { type: "basic", username: `a:${secrets.password}`, password: `${secrets.password}\n` }
            })
          )
        )
      )
      yield* Effect.either(keep(register(registration({ auth: { type: "hmac", secret: secrets.token, x: 1 } }))))
      yield* Effect.either(keep(register(registration({ auth: { type: "bearer", token: ` ${secrets.token}` } }))))
      yield* keep(service.list({}).pipe(inWorkspace(wsA)))
      for (const webhook of created) yield* keep(service.get(webhook.id).pipe(inWorkspace(wsA)))
      yield* publish("tour-created", { tour: tour() })
      yield* settle
      yield* TestClock.adjust("15 seconds")
      yield* settle
      for (const webhook of created) yield* keep(service.deliveries(webhook.id, {}).pipe(inWorkspace(wsA)))
      const alerts = yield* keep(service.alerts({}).pipe(inWorkspace(wsA)))
      assert.strictEqual(alerts.data.length, 3)
      const repository = yield* WebhookRepository
      yield* keep(repository.list(wsA, { limit: 100, after: undefined }))
      yield* keep(
        Effect.flatMap(FailureAlerts, (store) =>
          store.list(wsA, { limit: 100, after: undefined, webhookId: undefined })
        )
      )
      const lines = yield* LogLines
      assert.isTrue(lines.length > 0)
      assert.isTrue(texts.length > 0)
      assert.deepStrictEqual(leakedSecrets([...texts, ...lines]), [])
      // The scan does find a secret where one is: the Bearer token travels in clear to the receiver.
      const sent = (yield* requests).map((received) => JSON.stringify(received.request.headers))
      assert.deepStrictEqual(leakedSecrets(sent), [secrets.token])
    }).pipe(
      Effect.provide(
        Layer.merge(
          makeLayer({
            respond: (_, index) =>
              index % 2 === 0
                ? ok(500)
                : Effect.fail(new SendError({ reason: "tls", message: "self-signed certificate" }))
          }),
          captureLogs
        )
      )
    )
  )
})
