/**
 * Flow control (contract §8) on PGlite and PostgreSQL: disable and enable with held deliveries,
 * automatic disabling, the rate limit's schedule and FIFO ordering in the claim, over two dispatchers.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventIntake from "@waybill/events/EventIntake"
import { type ClaimedDelivery, DeliveryStore as DeliveryStoreTag } from "@waybill/webhooks/DeliveryStore"
import { Dispatcher, layer as DispatcherLayer } from "@waybill/webhooks/Dispatcher"
import * as FlowControl from "@waybill/webhooks/FlowControl"
import * as HttpSender from "@waybill/webhooks/HttpSender"
import * as Retention from "@waybill/webhooks/Retention"
import { WebhookService } from "@waybill/webhooks/WebhookService"
import { Effect, Layer, Ref, Schema, TestClock } from "effect"
import { claimAs, fannedOut, forEachBackend, webhookStack } from "./harness.js"

const NOW = 1_798_000_000_000
const secret = "an-hmac-secret-of-some-length"

// The status code per URL path and attempt (the last one repeats); 200 for paths not named.
const script = Ref.unsafeMake<Record<string, ReadonlyArray<number>>>({})

const as = (workspaceId: WorkspaceId) => Effect.provideService(CurrentWorkspace, { id: workspaceId, apiKeyId: "k" })
const service = <A, E>(
  f: (service: WebhookService["Type"]) => Effect.Effect<A, E, CurrentWorkspace>,
  ws: WorkspaceId
) => Effect.flatMap(WebhookService, f).pipe(as(ws))

const register = (ws: WorkspaceId, path: string, extra: Record<string, unknown> = {}) =>
  service(
    (s) =>
      s.register({
        url: `https://hooks.example.org/${path}`,
        events: ["tour-created"],
        auth: { type: "hmac", secret },
        ...extra
      }),
    ws
  )

const publish = (ws: WorkspaceId, id: string) =>
  EventIntake.publish({
    type: "tour-created",
    payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
  }).pipe(as(ws))

const settle = Effect.flatMap(Dispatcher, (dispatcher) => Effect.zipRight(dispatcher.fanOutAll, dispatcher.deliverDue))

// The requests sent to a path, in the order they were sent: their event ids and attempts.
const sentTo = (path: string) =>
  Effect.flatMap(HttpSender.SentRequests, (sent) => sent.all).pipe(
    Effect.map((all) =>
      all
        .filter((received) => received.request.url.endsWith(`/${path}`))
        .map((received) => ({
          eventId: received.request.headers["X-Event-Id"]!,
          attempt: received.request.headers["X-Delivery-Attempt"]!
        }))
    )
  )

const statuses = (ws: WorkspaceId, webhookId: string) =>
  Effect.map(
    service((s) => s.deliveries(webhookId, { limit: 100 }), ws),
    (page) => page.data.map((delivery) => delivery.status).sort()
  )

// A claim at `now` of up to 10 deliveries per webhook, leased for 30 s under `token`.
const claimUpTo10 = (store: DeliveryStoreTag["Type"], token: string, now: number, horizonMs: number) =>
  store.claimDue({
    now,
    limit: 100,
    maxPerWebhook: 10,
    maxInFlightPerWebhook: 10,
    horizonMs,
    roomByWebhook: new Map(),
    leaseUntil: now + 30_000,
    leaseToken: token
  })

const secondDispatcher = (options: Parameters<typeof DispatcherLayer>[0]) =>
  Layer.build(DispatcherLayer(options)).pipe(
    Effect.map((context) => context.unsafeMap.get(Dispatcher.key) as Dispatcher["Type"])
  )

forEachBackend(
  "Flow control",
  webhookStack(
    HttpSender.layerScripted((request) =>
      Effect.map(Ref.get(script), (codes) => {
        const path = new URL(request.url).pathname.slice(1)
        const list = codes[path] ?? [200]
        const attempt = Number(request.headers["X-Delivery-Attempt"])
        return { statusCode: list[Math.min(attempt - 1, list.length - 1)]! }
      })
    ),
    { retryDelayMs: 10_000, timeoutMs: 1_000, disableAfterFailures: 2 }
  ),
  (it) => {
    it.effect("a webhook answers its flow settings; bad ones are 400s at their paths", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const ws = Schema.decodeSync(WorkspaceId)("flow-shape")
        const plain = yield* register(ws, "shape-plain")
        assert.strictEqual(plain.status, "enabled")
        assert.strictEqual(plain.rateLimitPerSecond, null)
        assert.strictEqual(plain.ordering, "none")
        assert.isFalse("disabledReason" in plain)
        const set = yield* register(ws, "shape-set", { rateLimitPerSecond: 10_000, ordering: "fifo" })
        assert.deepStrictEqual([set.rateLimitPerSecond, set.ordering], [10_000, "fifo"])
        const refused = yield* Effect.flip(register(ws, "shape-bad", { rateLimitPerSecond: 0, ordering: "lifo" }))
        assert.strictEqual(refused._tag, "ValidationError")
        if (refused._tag === "ValidationError") {
          assert.deepStrictEqual(refused.issues.map((issue) => issue.path).sort(), ["ordering", "rateLimitPerSecond"])
        }
        for (const bad of [10_001, 1.5, "5"]) {
          const error = yield* Effect.flip(register(ws, "shape-bad", { rateLimitPerSecond: bad }))
          assert.strictEqual(error._tag, "ValidationError", String(bad))
        }
        // The console's edit: omitted, as stored; null lifts the limit.
        const kept = yield* service(
          (s) =>
            s.update(set.id, {
              url: "https://hooks.example.org/shape-set",
              events: ["tour-created"],
              auth: { type: "hmac" }
            }),
          ws
        )
        assert.deepStrictEqual([kept.rateLimitPerSecond, kept.ordering], [10_000, "fifo"])
        const lifted = yield* service(
          (s) =>
            s.update(set.id, {
              url: "https://hooks.example.org/shape-set",
              events: ["tour-created"],
              auth: { type: "hmac" },
              rateLimitPerSecond: null,
              ordering: "none"
            }),
          ws
        )
        assert.deepStrictEqual([lifted.rateLimitPerSecond, lifted.ordering], [null, "none"])
        assert.deepStrictEqual(yield* service((s) => s.get(set.id), ws), lifted)
      })
    )

    it.effect("disabled: deliveries are held and nothing is sent; enabled: sent in event order, each once", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const ws = Schema.decodeSync(WorkspaceId)("flow-hold")
        const webhook = yield* register(ws, "hold")
        const disabled = yield* service((s) => s.disable(webhook.id), ws)
        assert.deepStrictEqual(
          [disabled.status, disabled.disabledReason, disabled.disabledAt],
          ["disabled", "manual", NOW / 1000]
        )
        yield* TestClock.adjust(5_000)
        // Idempotent: still disabled since the first time.
        assert.deepStrictEqual(yield* service((s) => s.disable(webhook.id), ws), disabled)
        const events = yield* Effect.forEach([0, 1, 2, 3, 4], (i) => publish(ws, `tour_hold${i}`))
        yield* fannedOut(webhook.id, 5)
        yield* settle
        assert.deepStrictEqual(yield* sentTo("hold"), [])
        assert.deepStrictEqual(yield* statuses(ws, webhook.id), ["held", "held", "held", "held", "held"])
        // A resend cannot jump the queue: a held delivery waits for the enable, in event order.
        const [held] = (yield* service((s) => s.deliveries(webhook.id, { limit: 1 }), ws)).data
        const refused = yield* Effect.flip(service((s) => s.resend(webhook.id, held!.id), ws))
        assert.strictEqual(refused._tag, "DeliveryPending")
        assert.deepStrictEqual(yield* statuses(ws, webhook.id), ["held", "held", "held", "held", "held"])
        // A second dispatcher, as another process, claims nothing either.
        const second = yield* secondDispatcher({ retryDelayMs: 10_000, timeoutMs: 1_000 })
        yield* second.deliverDue
        assert.deepStrictEqual(yield* sentTo("hold"), [])

        const enabled = yield* service((s) => s.enable(webhook.id), ws)
        assert.strictEqual(enabled.status, "enabled")
        assert.isFalse("disabledReason" in enabled || "disabledAt" in enabled)
        assert.deepStrictEqual(yield* service((s) => s.enable(webhook.id), ws), enabled)
        const first = yield* Dispatcher
        yield* Effect.all([first.deliverDue, second.deliverDue], { concurrency: "unbounded" })
        yield* settle
        const sent = yield* sentTo("hold")
        assert.deepStrictEqual(
          sent.map((request) => request.eventId).sort(),
          events.map((event) => event.id).sort(),
          "each held delivery sent exactly once"
        )
        assert.deepStrictEqual(yield* statuses(ws, webhook.id), Array(5).fill("succeeded"))
      }).pipe(Effect.scoped)
    )

    it.effect("how many deliveries each webhook holds and the oldest, in one read; the answers say both", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const ws = Schema.decodeSync(WorkspaceId)("flow-expiry")
        const foreignWs = Schema.decodeSync(WorkspaceId)("flow-expiry-other")
        const first = yield* register(ws, "expiry-first")
        const second = yield* register(ws, "expiry-second")
        const open = yield* register(ws, "expiry-open")
        const foreign = yield* register(foreignWs, "expiry-foreign")
        for (const [webhook, in_] of [
          [first, ws],
          [second, ws],
          [foreign, foreignWs]
        ] as const) {
          yield* service((s) => s.disable(webhook.id), in_)
        }
        yield* TestClock.setTime(NOW + 500)
        yield* publish(ws, "tour_expiry0")
        yield* publish(foreignWs, "tour_expiry_foreign")
        yield* TestClock.setTime(NOW + 5_500)
        yield* publish(ws, "tour_expiry1")
        for (const webhook of [first, second, open]) yield* fannedOut(webhook.id, 2)
        yield* fannedOut(foreign.id, 1)
        yield* settle
        assert.deepStrictEqual(yield* statuses(ws, first.id), ["held", "held"])
        assert.deepStrictEqual(yield* statuses(ws, open.id), ["succeeded", "succeeded"])

        // Per webhook holding deliveries, how many (from its hours) and the smallest id: its oldest
        // event's. Not another workspace's, not an enabled webhook's.
        const oldestOf = (webhookId: string) =>
          Effect.map(
            service((s) => s.deliveries(webhookId, { limit: 10 }), ws),
            (page) => page.data.map((delivery) => delivery.id).sort()[0]!
          )
        const store = yield* DeliveryStoreTag
        const held = yield* store.held(ws, [first.id, second.id, open.id, foreign.id, "whk_missing"])
        const expected = new Map([
          [first.id, { count: 2, oldestId: yield* oldestOf(first.id) }],
          [second.id, { count: 2, oldestId: yield* oldestOf(second.id) }]
        ])
        assert.deepStrictEqual(new Map(held), expected)
        assert.strictEqual((yield* store.held(foreignWs, [first.id, second.id])).size, 0)
        assert.strictEqual((yield* store.held(ws, [])).size, 0)

        // The answers: the oldest held event's time plus the retention, in epoch seconds.
        const page = yield* service((s) => s.list({ limit: 10 }), ws).pipe(
          Effect.provideService(Retention.Window, { retentionMs: 120_000 })
        )
        // Registered in the same millisecond: compared by id, not in the page's order.
        assert.deepStrictEqual(
          new Map(page.data.map((answer) => [answer.id, answer.oldestHeldExpiresAt])),
          new Map([
            [first.id, (NOW + 120_000) / 1000],
            [second.id, (NOW + 120_000) / 1000],
            [open.id, undefined]
          ])
        )
        assert.deepStrictEqual(
          new Map(page.data.map((answer) => [answer.id, answer.heldDeliveries])),
          new Map([
            [first.id, 2],
            [second.id, 2],
            [open.id, undefined]
          ])
        )
        assert.isFalse("oldestHeldExpiresAt" in page.data.find((answer) => answer.id === open.id)!)
        assert.isFalse("heldDeliveries" in page.data.find((answer) => answer.id === open.id)!)
        // With a retention of 0 nothing expires, and the count still shows.
        const kept = yield* service((s) => s.get(first.id), ws).pipe(
          Effect.provideService(Retention.Window, { retentionMs: 0 })
        )
        assert.deepStrictEqual([kept.heldDeliveries, "oldestHeldExpiresAt" in kept], [2, false])
        assert.strictEqual(
          (yield* service((s) => s.get(first.id), ws)).oldestHeldExpiresAt,
          Math.floor((NOW + 500 + Retention.defaultRetentionMs) / 1000)
        )
        const enabled = yield* service((s) => s.enable(second.id), ws)
        assert.isFalse("oldestHeldExpiresAt" in enabled)
        assert.isFalse("heldDeliveries" in enabled)
        assert.deepStrictEqual([...(yield* store.held(ws, [first.id, second.id])).keys()], [first.id])
      }).pipe(Effect.scoped)
    )

    it.effect("held deliveries go out in event order through the normal path, a held retry with its retry", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const ws = Schema.decodeSync(WorkspaceId)("flow-order")
        yield* Ref.set(script, { order: [500, 200] })
        const webhook = yield* register(ws, "order", { ordering: "fifo" })
        const early = yield* publish(ws, "tour_order0")
        yield* fannedOut(webhook.id, 1)
        yield* settle
        // Its first attempt failed: pending, waiting for its retry. Disabling holds it.
        yield* service((s) => s.disable(webhook.id), ws)
        const events = yield* Effect.forEach([1, 2, 3], (i) => publish(ws, `tour_order${i}`))
        yield* fannedOut(webhook.id, 4)
        yield* settle
        assert.deepStrictEqual(yield* statuses(ws, webhook.id), ["held", "held", "held", "held"])
        yield* TestClock.adjust(60_000)
        yield* service((s) => s.enable(webhook.id), ws)
        for (let i = 0; i < 12; i++) {
          yield* settle
          yield* TestClock.adjust(13_000)
        }
        const sent = yield* sentTo("order")
        const order = [early, ...events].map((event) => event.id)
        assert.deepStrictEqual(
          sent.map((request) => `${request.eventId}#${request.attempt}`),
          [
            `${order[0]}#1`,
            `${order[0]}#2`,
            `${order[1]}#1`,
            `${order[1]}#2`,
            `${order[2]}#1`,
            `${order[2]}#2`,
            `${order[3]}#1`,
            `${order[3]}#2`
          ]
        )
      })
    )

    it.effect("automatic disabling: after 2 deliveries in a row failed, disabled as failing; a success resets", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const ws = Schema.decodeSync(WorkspaceId)("flow-failing")
        yield* Ref.set(script, { failing: [500], flaky: [500] })
        const failing = yield* register(ws, "failing")
        const flaky = yield* register(ws, "flaky")
        const runCycle = Effect.gen(function* () {
          yield* settle
          yield* TestClock.adjust(13_000)
          yield* settle
        })
        yield* publish(ws, "tour_fail0")
        yield* fannedOut(flaky.id, 1)
        yield* runCycle
        // One failed in a row each; a success for `flaky` starts its count again.
        yield* Ref.set(script, { failing: [500], flaky: [200] })
        yield* publish(ws, "tour_fail1")
        yield* fannedOut(flaky.id, 2)
        yield* runCycle
        yield* Ref.set(script, { failing: [500], flaky: [500] })
        const third = yield* publish(ws, "tour_fail2")
        yield* fannedOut(flaky.id, 3)
        yield* runCycle
        const stopped = yield* service((s) => s.get(failing.id), ws)
        assert.strictEqual(stopped.status, "disabled")
        assert.strictEqual(stopped.disabledReason, "failing")
        assert.strictEqual((yield* service((s) => s.get(flaky.id), ws)).status, "enabled")
        // Failed twice in a row: disabled at the second (tour_fail1); the third event is held.
        const log = yield* service((s) => s.deliveries(failing.id, { limit: 10 }), ws)
        assert.deepStrictEqual(log.data.find((delivery) => delivery.eventId === third.id)?.status, "held")
        assert.deepStrictEqual(log.data.map((delivery) => delivery.status).sort(), ["failed", "failed", "held"])
        const sent = yield* sentTo("failing")
        assert.isFalse(sent.some((request) => request.eventId === third.id))
        // Enabling starts the count afresh: one more failure does not disable it again.
        yield* service((s) => s.enable(failing.id), ws)
        yield* runCycle
        assert.strictEqual((yield* service((s) => s.get(failing.id), ws)).status, "enabled")
      })
    )

    it.effect("rate limit: no more attempts start in a second than allowed, over two dispatchers", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const ws = Schema.decodeSync(WorkspaceId)("flow-rate")
        const webhook = yield* register(ws, "rate", { rateLimitPerSecond: 3 })
        yield* Effect.forEach([0, 1, 2, 3, 4, 5, 6, 7, 8], (i) => publish(ws, `tour_rate${i}`))
        const first = yield* Dispatcher
        const second = yield* secondDispatcher({ retryDelayMs: 10_000, timeoutMs: 1_000 })
        yield* fannedOut(webhook.id, 9)
        // Both claim every 100 ms for 4 s.
        for (let step = 0; step < 40; step++) {
          yield* Effect.all([first.deliverDue, second.deliverDue], { concurrency: "unbounded" })
          yield* TestClock.adjust(100)
        }
        const starts = (yield* Effect.flatMap(HttpSender.SentRequests, (sent) => sent.all))
          .filter((received) => received.request.url.endsWith("/rate"))
          .map((received) => received.at)
        assert.strictEqual(starts.length, 9)
        for (const [i, at] of starts.entries()) {
          const within = starts.slice(i).filter((later) => later < at + 1_000).length
          assert.isAtMost(within, 3, `attempts in the second from the ${i + 1}th`)
        }
      }).pipe(Effect.scoped)
    )

    it.effect("rate limit: claims schedule attempts one interval apart within their horizon, whoever claims", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const ws = Schema.decodeSync(WorkspaceId)("flow-schedule")
        const webhook = yield* register(ws, "schedule", { rateLimitPerSecond: 40 })
        const events = yield* Effect.forEach([0, 1, 2, 3, 4, 5], (i) => publish(ws, `tour_schedule${i}`))
        yield* fannedOut(webhook.id, 6)
        const store = yield* DeliveryStoreTag
        const claim = (token: string, now: number, horizonMs = 100) => claimUpTo10(store, token, now, horizonMs)
        const step = FlowControl.interval(40)
        const slots = (claimed: ReadonlyArray<{ readonly notBefore?: number | undefined }>) =>
          claimed.map((delivery) => Math.round((delivery.notBefore! - NOW) * 100) / 100)
        const round = (at: number) => Math.round(at * 100) / 100
        // From 50 to 100 ms after the first claim: two slots, the earliest events first.
        const first = yield* claim("a", NOW)
        assert.deepStrictEqual(slots(first), [50, round(50 + step)])
        assert.deepStrictEqual(
          first.map((delivery) => delivery.eventId),
          events.slice(0, 2).map((event) => event.id)
        )
        // Another claimer 30 ms later gets the slots after those; one whose clock read earlier, none.
        assert.deepStrictEqual(slots(yield* claim("b", NOW + 30)), [round(50 + 2 * step), round(50 + 3 * step)])
        assert.deepStrictEqual(yield* claim("c", NOW + 10), [])
        // The horizon of `deliverDue` (none): nothing before the next slot is due.
        assert.deepStrictEqual(yield* claim("d", NOW + 150, 0), [])
        const [row] = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ next_at: number; counts: string }>`
            SELECT next_at, array_to_string(counts, ',') AS counts FROM webhook_flow WHERE webhook_id = ${webhook.id}`
        )
        assert.closeTo(Number(row!.next_at), NOW + 50 + 4 * step, 1e-3)
        // The window of 0011, kept for processes of the previous release: 4 claimed.
        assert.strictEqual(
          row!.counts.split(",").reduce((sum, count) => sum + Number(count), 0),
          4
        )
        // Its pending deliveries would be due in the next tests' claims.
        yield* service((s) => s.delete(webhook.id), ws)
      })
    )

    it.effect(
      "rate limit: a claim given back twice for starting late holds two slots, one again after its record",
      () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(NOW)
          const ws = Schema.decodeSync(WorkspaceId)("flow-missed")
          const webhook = yield* register(ws, "missed", { rateLimitPerSecond: 40 })
          const events = yield* Effect.forEach([0, 1, 2], (i) => publish(ws, `tour_missed${i}`))
          yield* fannedOut(webhook.id, 3)
          const store = yield* DeliveryStoreTag
          const claim = (token: string, now: number) => claimUpTo10(store, token, now, 100)
          const missedSlots = Effect.flatMap(
            SqlClient.SqlClient,
            (sql) => sql<{ missed_slots: number }>`
            SELECT missed_slots FROM deliveries WHERE webhook_id = ${webhook.id} ORDER BY seq`
          ).pipe(Effect.map((rows) => rows.map((row) => row.missed_slots)))
          const step = FlowControl.interval(40)
          const placed = (claimed: ReadonlyArray<ClaimedDelivery>) =>
            claimed.map((delivery) => [delivery.notBefore! - NOW, delivery.startBy! - NOW].map((at) => Math.round(at)))
          // One slot each: each may start until 50 ms after it.
          const [late, onTime] = yield* claim("a", NOW)
          assert.deepStrictEqual(placed([late!, onTime!]), [
            [50, 100],
            [Math.round(50 + step), Math.round(100 + step)]
          ])
          // The first woke too late: given back, counted; a plain release counts nothing.
          const giveBack = (token: string) =>
            store.releaseClaims([
              { deliveryId: late!.id, leaseToken: token, abandoned: false, missedSlot: true },
              { deliveryId: onTime!.id, leaseToken: token, abandoned: false }
            ])
          assert.strictEqual(yield* giveBack("a"), 2)
          assert.deepStrictEqual(yield* missedSlots, [1, 0, 0])
          // Claimed again first (the earliest due): one slot after one give-back.
          const again = yield* claim("b", NOW + 120)
          assert.deepStrictEqual(
            again.map((delivery) => delivery.eventId),
            events.slice(0, 2).map((event) => event.id)
          )
          assert.deepStrictEqual(placed(again), [
            [170, 220],
            [Math.round(170 + step), Math.round(220 + step)]
          ])
          // Late again: now it holds two slots, may start until 50 ms after the second, and the
          // next delivery's slot comes after both.
          assert.strictEqual(yield* giveBack("b"), 2)
          assert.deepStrictEqual(yield* missedSlots, [2, 0, 0])
          const wider = yield* claim("c", NOW + 240)
          assert.deepStrictEqual(
            wider.map((delivery) => delivery.eventId),
            events.slice(0, 2).map((event) => event.id)
          )
          assert.deepStrictEqual(placed(wider), [
            [290, Math.round(290 + step + 50)],
            [Math.round(290 + 2 * step), Math.round(290 + 2 * step + 50)]
          ])
          // Its record (a failure, retried later) counts from nothing again: one slot at its retry.
          yield* store.complete([
            {
              deliveryId: late!.id,
              leaseToken: "c",
              attempt: {
                at: Math.floor(NOW / 1000),
                statusCode: 500,
                durationMs: 1,
                error: "http",
                trigger: "automatic"
              },
              status: "pending",
              retryAt: NOW + 1_000
            }
          ])
          assert.deepStrictEqual(yield* missedSlots, [0, 0, 0])
          const retry = yield* claim("d", NOW + 1_000)
          assert.deepStrictEqual(
            retry.map((delivery) => [delivery.eventId, delivery.startBy! - delivery.notBefore!]),
            [
              [events[2]!.id, FlowControl.lateStartMs],
              [events[0]!.id, FlowControl.lateStartMs]
            ]
          )
          yield* service((s) => s.delete(webhook.id), ws)
        })
    )

    it.effect("FIFO: one delivery in flight, the earliest first; a lease that runs out hands it on, in order", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const ws = Schema.decodeSync(WorkspaceId)("flow-fifo")
        const webhook = yield* register(ws, "fifo", { ordering: "fifo" })
        const events = yield* Effect.forEach([0, 1, 2], (i) => publish(ws, `tour_fifo${i}`))
        yield* fannedOut(webhook.id, 3)
        const store = yield* DeliveryStoreTag
        const claim = claimAs
        const [head, ...others] = yield* claim("a")
        assert.strictEqual(others.length, 0, "one at a time")
        assert.strictEqual(head!.eventId, events[0]!.id)
        assert.deepStrictEqual(yield* claim("b"), [], "nothing while the head is in flight")
        // The claimer dies: once its lease has run out, the same head is claimed again.
        yield* TestClock.adjust(30_001)
        const again = yield* claim("c")
        assert.deepStrictEqual(
          again.map((delivery) => delivery.id),
          [head!.id]
        )
        const now = yield* TestClock.currentTimeMillis
        const attempt = {
          at: Math.floor(now / 1000),
          statusCode: 500,
          durationMs: 1,
          error: "http" as const,
          trigger: "automatic" as const
        }
        // A first attempt that failed: its retry is due later, and the next waits for it.
        yield* store.complete([
          { deliveryId: head!.id, leaseToken: "c", attempt, status: "pending", retryAt: now + 10_000 }
        ])
        assert.deepStrictEqual(yield* claim("d"), [], "the next waits for the retry")
        yield* TestClock.adjust(10_000)
        const retry = yield* claim("e")
        assert.deepStrictEqual(
          retry.map((delivery) => delivery.id),
          [head!.id]
        )
        yield* store.complete([
          {
            deliveryId: head!.id,
            leaseToken: "e",
            attempt: { ...attempt, statusCode: 200, error: null },
            status: "succeeded",
            retryAt: null
          }
        ])
        const next = yield* claim("f")
        assert.deepStrictEqual(
          next.map((delivery) => delivery.eventId),
          [events[1]!.id]
        )
        const rows = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_flow WHERE webhook_id = ${webhook.id}`
        )
        assert.strictEqual(rows[0]!.n, 1)
      })
    )

    it.effect("FIFO over two dispatchers: sent one by one in event order", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const ws = Schema.decodeSync(WorkspaceId)("flow-fifo2")
        const webhook = yield* register(ws, "fifo2", { ordering: "fifo" })
        const events = yield* Effect.forEach([0, 1, 2, 3, 4, 5], (i) => publish(ws, `tour_fifo2${i}`))
        const first = yield* Dispatcher
        const second = yield* secondDispatcher({ retryDelayMs: 10_000, timeoutMs: 1_000 })
        yield* fannedOut(webhook.id, 6)
        for (let i = 0; i < 8; i++) {
          yield* Effect.all([first.deliverDue, second.deliverDue], { concurrency: "unbounded" })
        }
        assert.deepStrictEqual(
          (yield* sentTo("fifo2")).map((request) => request.eventId),
          events.map((event) => event.id)
        )
      }).pipe(Effect.scoped)
    )
  }
)
