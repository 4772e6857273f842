import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import * as Id from "@waybill/core/Id"
import * as Metrics from "@waybill/core/Metrics"
import * as TraceContext from "@waybill/core/TraceContext"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventIntake from "@waybill/events/EventIntake"
import { EventOutbox as EventOutboxTag } from "@waybill/events/EventOutbox"
import * as Hmac from "@waybill/signing/Hmac"
import { attemptNumber, DeliveryStore as DeliveryStoreTag, type NewDelivery } from "@waybill/webhooks/DeliveryStore"
import { Dispatcher, layer as DispatcherLayer } from "@waybill/webhooks/Dispatcher"
import * as HttpSender from "@waybill/webhooks/HttpSender"
import { type OutboxRead, OutboxReader as OutboxReaderTag } from "@waybill/webhooks/OutboxReader"
import { WebhookRepository } from "@waybill/webhooks/WebhookRepository"
import { WebhookService } from "@waybill/webhooks/WebhookService"
import { Clock, Deferred, Effect, Fiber, Layer, Metric, Option, Ref, Schema, TestClock } from "effect"
import * as DeliveryStore from "../src/PgDeliveryStore.js"
import * as PgOutboxReader from "../src/PgOutboxReader.js"
import * as Testing from "../src/Testing.js"
import { forEachBackend, webhookStack } from "./harness.js"

const NOW = 1_798_000_000_000
const wsA = Schema.decodeSync(WorkspaceId)("hooks-a")
const wsB = Schema.decodeSync(WorkspaceId)("hooks-b")
const wsText = Schema.decodeSync(WorkspaceId)("hooks-text")
const wsTrace = Schema.decodeSync(WorkspaceId)("hooks-trace")
const secret = "an-hmac-secret-of-some-length"

// Each test scripts the receiver through this reference: the status code per delivery attempt.
const script = Ref.unsafeMake<ReadonlyArray<number>>([200])

const as = (workspaceId: WorkspaceId) => Effect.provideService(CurrentWorkspace, { id: workspaceId, apiKeyId: "k" })

const register = (input: unknown, workspaceId = wsA) =>
  Effect.flatMap(WebhookService, (service) => service.register(input)).pipe(as(workspaceId))

const tourCreated = (id: string, status = "planned") =>
  EventIntake.publish({ type: "tour-created", payload: { tour: { id, status, substatus: null, properties: {} } } })

// Every event behind the outbox's horizon first (see `Testing.eventsVisible`), so one fan-out
// reads them all.
const fanOut = Effect.zipRight(
  Testing.eventsVisible,
  Effect.flatMap(Dispatcher, (dispatcher) => dispatcher.fanOutAll)
)
const settle = Effect.zipRight(
  fanOut,
  Effect.flatMap(Dispatcher, (dispatcher) => dispatcher.deliverDue)
)

// What a read found, without the webhooks' version.
const found = (read: OutboxRead) => ({ events: read.events, waiting: read.waiting })

const requestsFor = (eventId: string) =>
  Effect.flatMap(HttpSender.SentRequests, (sent) => sent.all).pipe(
    Effect.map((all) => all.filter((received) => received.request.headers["X-Event-Id"] === eventId))
  )

forEachBackend(
  "Webhooks storage and dispatch",
  webhookStack(
    HttpSender.layerScripted((request) =>
      Effect.map(Ref.get(script), (codes) => {
        const attempt = Number(request.headers["X-Delivery-Attempt"])
        return { statusCode: codes[Math.min(attempt - 1, codes.length - 1)]! }
      })
    ),
    { retryDelayMs: 10_000, timeoutMs: 1_000 }
  ),
  (it) => {
    it.effect("records and delivers a host's event byte for byte, whatever text its payload holds", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        yield* Ref.set(script, [200])
        yield* register(
          { url: "https://hooks.example.org/text", events: ["tour-created"], auth: { type: "hmac", secret } },
          wsText
        )
        // What a host's own data may hold: JSON escapes PostgreSQL's json type would refuse
        // (a NUL, a lone surrogate), quotes, backslashes, line separators, any script.
        const text = 'a \u0000 b \ud800 c "q" \\ d \u2028 e 東京 😀'
        const outbox = yield* EventOutboxTag
        const [event] = yield* outbox.publish(wsText, [
          {
            type: "tour-created",
            payload: { tour: { id: "tour_text", status: text, substatus: null, properties: { [text]: text } } }
          }
        ])
        const stored = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ body: string }>`SELECT body FROM events WHERE id = ${event!.id}`
        )
        assert.strictEqual(stored[0]!.body, event!.body)
        assert.strictEqual(JSON.parse(event!.body).payload.tour.status, text)
        yield* settle
        const sent = yield* requestsFor(event!.id)
        assert.strictEqual(sent.length, 1)
        assert.strictEqual(sent[0]!.request.body, event!.body)
      })
    )

    it.effect("delivers the stored body once, signed, and logs the attempt", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        yield* Ref.set(script, [200])
        const webhook = yield* register({
          url: "https://hooks.example.org/a",
          events: ["tour-created"],
          auth: { type: "hmac", secret }
        })
        const stored = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ document: string }>`SELECT document::text AS document FROM webhooks WHERE id = ${webhook.id}`
        )
        assert.isFalse(stored[0]!.document.includes(secret), "the secret is sealed at rest")
        const event = yield* tourCreated("tour_a1").pipe(as(wsA))
        yield* settle
        const sent = yield* requestsFor(event.id)
        assert.strictEqual(sent.length, 1)
        const request = sent[0]!.request
        assert.strictEqual(request.body, event.body)
        assert.strictEqual(request.headers["X-Delivery-Attempt"], "1")
        assert.isTrue(
          Hmac.verify({ secret, headers: request.headers, rawBody: request.body, now: NOW / 1000 })._tag === "Right"
        )
        const log = yield* Effect.flatMap(WebhookService, (service) => service.deliveries(webhook.id, {})).pipe(as(wsA))
        assert.strictEqual(log.data.length, 1)
        assert.strictEqual(log.data[0]!.status, "succeeded")
        assert.deepStrictEqual(
          log.data[0]!.attempts.map((attempt) => attempt.statusCode),
          [200]
        )
        yield* settle
        assert.strictEqual((yield* requestsFor(event.id)).length, 1, "never sent twice")
      })
    )

    it.effect("500 then 200: retried once after the delay with the same delivery id", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        yield* Ref.set(script, [500, 200])
        const webhook = yield* register(
          {
            url: "https://hooks.example.org/b",
            events: ["tour-created"],
            auth: { type: "bearer", token: "tok" }
          },
          wsB
        )
        const event = yield* tourCreated("tour_b1").pipe(as(wsB))
        yield* settle
        assert.strictEqual((yield* requestsFor(event.id)).length, 1)
        yield* TestClock.adjust("9 seconds")
        yield* settle
        assert.strictEqual((yield* requestsFor(event.id)).length, 1, "not before the delay")
        yield* TestClock.adjust("4 seconds")
        yield* settle
        const sent = yield* requestsFor(event.id)
        assert.strictEqual(sent.length, 2)
        assert.strictEqual(sent[0]!.request.headers["X-Delivery-Id"], sent[1]!.request.headers["X-Delivery-Id"])
        assert.deepStrictEqual(
          sent.map((s) => s.request.headers["X-Delivery-Attempt"]),
          ["1", "2"]
        )
        const log = yield* Effect.flatMap(WebhookService, (service) => service.deliveries(webhook.id, {})).pipe(as(wsB))
        assert.strictEqual(log.data[0]!.status, "succeeded")
        assert.deepStrictEqual(
          log.data[0]!.attempts.map((attempt) => attempt.statusCode),
          [500, 200]
        )
        const alerts = yield* Effect.flatMap(WebhookService, (service) => service.alerts({})).pipe(as(wsB))
        assert.strictEqual(alerts.data.length, 0)
      })
    )

    it.effect("the request's trace is stored with the event and continued by every attempt; attempts are counted", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        yield* Ref.set(script, [503, 200])
        yield* register(
          { url: "https://hooks.example.org/traced", events: ["tour-created"], auth: { type: "bearer", token: "tok" } },
          wsTrace
        )
        const count = (metric: Metric.Metric.Counter<number>, tag: string, value: string) =>
          Effect.map(Metric.value(Metric.tagged(metric, tag, value)), (state) => state.count)
        const before = {
          succeeded: yield* count(Metrics.deliveries, "status", "succeeded"),
          http: yield* count(Metrics.attempts, "result", "http"),
          success: yield* count(Metrics.attempts, "result", "success"),
          published: yield* count(Metrics.eventsPublished, "type", "tour-created")
        }
        const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
        const event = yield* tourCreated("tour_traced").pipe(
          as(wsTrace),
          TraceContext.withIncoming(`00-${traceId}-00f067aa0ba902b7-01`)
        )
        const [row] = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ traceparent: string }>`SELECT traceparent FROM events WHERE id = ${event.id}`
        )
        assert.strictEqual(row!.traceparent, event.traceparent)
        assert.strictEqual(Option.getOrThrow(TraceContext.parse(row!.traceparent)).traceId, traceId)
        yield* settle
        yield* TestClock.adjust("13 seconds")
        yield* settle
        const sent = (yield* requestsFor(event.id)).map((s) =>
          Option.getOrThrow(TraceContext.parse(s.request.headers.traceparent))
        )
        assert.strictEqual(sent.length, 2)
        assert.deepStrictEqual(
          sent.map((context) => context.traceId),
          [traceId, traceId]
        )
        assert.notStrictEqual(sent[0]!.spanId, sent[1]!.spanId)
        assert.deepStrictEqual(
          {
            succeeded: (yield* count(Metrics.deliveries, "status", "succeeded")) - before.succeeded,
            http: (yield* count(Metrics.attempts, "result", "http")) - before.http,
            success: (yield* count(Metrics.attempts, "result", "success")) - before.success,
            published: (yield* count(Metrics.eventsPublished, "type", "tour-created")) - before.published
          },
          { succeeded: 1, http: 1, success: 1, published: 1 }
        )
      })
    )

    it.effect("500 twice: failed, and one alert raised and listed", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        yield* Ref.set(script, [500])
        const workspace = Schema.decodeSync(WorkspaceId)("hooks-c")
        const webhook = yield* register(
          {
            url: "https://hooks.example.org/c",
            events: ["tour-created"],
            auth: { type: "basic", username: "ops", password: "pw" }
          },
          workspace
        )
        const event = yield* tourCreated("tour_c1").pipe(as(workspace))
        yield* settle
        yield* TestClock.adjust("13 seconds")
        yield* settle
        assert.strictEqual((yield* requestsFor(event.id)).length, 2)
        const log = yield* Effect.flatMap(WebhookService, (service) => service.deliveries(webhook.id, {})).pipe(
          as(workspace)
        )
        assert.strictEqual(log.data[0]!.status, "failed")
        const alerts = yield* Effect.flatMap(WebhookService, (service) =>
          service.alerts({ webhookId: webhook.id })
        ).pipe(as(workspace))
        assert.strictEqual(alerts.data.length, 1)
        assert.deepStrictEqual(
          [alerts.data[0]!.eventId, alerts.data[0]!.deliveryId, alerts.data[0]!.eventType],
          [event.id, log.data[0]!.id, "tour-created"]
        )
        yield* TestClock.adjust("1 hour")
        yield* settle
        assert.strictEqual((yield* requestsFor(event.id)).length, 2, "no third attempt")
      })
    )

    it.effect("a filter that does not match leaves no delivery; another workspace's events never arrive", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        yield* Ref.set(script, [200])
        const workspace = Schema.decodeSync(WorkspaceId)("hooks-d")
        const webhook = yield* register(
          {
            url: "https://hooks.example.org/d",
            events: ["tour-created"],
            filters: {
              "tour-created": { conditions: [{ field: "tour.status", operator: "equals", value: "completed" }] }
            },
            auth: { type: "hmac", secret }
          },
          workspace
        )
        const skipped = yield* tourCreated("tour_d1", "planned").pipe(as(workspace))
        const passed = yield* tourCreated("tour_d2", "completed").pipe(as(workspace))
        const foreign = yield* tourCreated("tour_d3", "completed").pipe(as(wsA))
        yield* settle
        assert.strictEqual((yield* requestsFor(skipped.id)).length, 0)
        assert.strictEqual((yield* requestsFor(passed.id)).length, 1)
        const toD = (yield* requestsFor(foreign.id)).filter((s) => s.request.url.endsWith("/d"))
        assert.strictEqual(toD.length, 0)
        const rows = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ event_id: string }>`SELECT event_id FROM deliveries WHERE webhook_id = ${webhook.id}`
        )
        assert.deepStrictEqual(
          rows.map((row) => row.event_id),
          [passed.id]
        )
      })
    )

    it.effect("two dispatchers on one database send each delivery once", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        yield* Ref.set(script, [200])
        const workspace = Schema.decodeSync(WorkspaceId)("hooks-e")
        yield* register(
          { url: "https://hooks.example.org/e", events: ["tour-created"], auth: { type: "hmac", secret } },
          workspace
        )
        const events = yield* Effect.forEach(
          Array.from({ length: 30 }, (_, i) => i),
          (i) => tourCreated(`tour_e${i}`).pipe(as(workspace))
        )
        const second = yield* Layer.build(DispatcherLayer({ retryDelayMs: 10_000, timeoutMs: 1_000 })).pipe(
          Effect.map((context) => context.unsafeMap.get(Dispatcher.key) as Dispatcher["Type"])
        )
        const first = yield* Dispatcher
        yield* Testing.eventsVisible
        yield* Effect.all(
          [
            Effect.zipRight(Effect.zipRight(Testing.eventsVisible, first.fanOutAll), first.deliverDue),
            Effect.zipRight(second.fanOutAll, second.deliverDue)
          ],
          { concurrency: "unbounded" }
        )
        yield* settle
        for (const event of events) assert.strictEqual((yield* requestsFor(event.id)).length, 1)
      }).pipe(Effect.scoped)
    )

    it.effect("claims take each webhook's room, oldest first, under a lease; completions apply while it holds", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const workspace = Schema.decodeSync(WorkspaceId)("hooks-room")
        const hmac = { type: "hmac", secret }
        const one = yield* register(
          { url: "https://hooks.example.org/one", events: ["tour-created"], auth: hmac },
          workspace
        )
        const two = yield* register(
          { url: "https://hooks.example.org/two", events: ["tour-created"], auth: hmac },
          workspace
        )
        const events = yield* Effect.forEach([0, 1, 2, 3, 4], (i) => tourCreated(`tour_room${i}`).pipe(as(workspace)))
        yield* fanOut
        const store = yield* DeliveryStoreTag
        const claim = (roomByWebhook: ReadonlyMap<string, number>, maxPerWebhook: number, leaseToken: string) =>
          store.claimDue({ now: NOW, limit: 10, maxPerWebhook, roomByWebhook, leaseUntil: NOW + 60_000, leaseToken })
        const first = yield* claim(new Map([[two.id, 0]]), 3, "token-1")
        assert.deepStrictEqual(
          first.map((claimed) => [claimed.webhookId, claimed.eventId, claimed.attempts]),
          events.slice(0, 3).map((event) => [one.id, event.id, 0])
        )
        assert.deepStrictEqual(first[0]!.target.url, "https://hooks.example.org/one")
        assert.strictEqual(first[0]!.body, events[0]!.body)
        const second = yield* claim(new Map([[one.id, 1]]), 2, "token-2")
        assert.deepStrictEqual(
          second.map((claimed) => [claimed.webhookId, claimed.eventId]).sort(),
          [
            [one.id, events[3]!.id],
            [two.id, events[0]!.id],
            [two.id, events[1]!.id]
          ].sort()
        )
        const retried = second.find((claimed) => claimed.webhookId === two.id && claimed.eventId === events[0]!.id)!
        const attempt = { at: NOW / 1000, statusCode: 200, durationMs: 3, error: null, trigger: "automatic" as const }
        const applied = yield* store.complete([
          { deliveryId: first[0]!.id, leaseToken: "token-1", attempt, status: "succeeded", retryAt: null },
          // Not this lease's token: ignored.
          { deliveryId: first[1]!.id, leaseToken: "token-2", attempt, status: "succeeded", retryAt: null },
          {
            deliveryId: retried.id,
            leaseToken: "token-2",
            attempt: { ...attempt, statusCode: 503, error: "http" },
            status: "pending",
            retryAt: NOW + 10_000
          }
        ])
        assert.deepStrictEqual([...applied].sort(), [first[0]!.id, retried.id].sort())
        // Leased ones stay out of claims; the retried one is due again only at its retry time.
        const key = (claimed: { readonly webhookId: string; readonly eventId: string }) =>
          `${claimed.webhookId}/${claimed.eventId}`
        const rest = yield* claim(new Map(), 10, "token-3")
        assert.deepStrictEqual(
          rest.map(key).sort(),
          [
            key({ webhookId: one.id, eventId: events[4]!.id }),
            ...[2, 3, 4].map((i) => key({ webhookId: two.id, eventId: events[i]!.id }))
          ].sort()
        )
        yield* TestClock.adjust(10_000)
        const later = yield* store.claimDue({
          now: NOW + 10_000,
          limit: 10,
          maxPerWebhook: 10,
          roomByWebhook: new Map(),
          leaseUntil: NOW + 70_000,
          leaseToken: "token-4"
        })
        assert.deepStrictEqual(later.map(key), [key(retried)])
        assert.strictEqual(later[0]!.attempts, 1)
      }).pipe(Effect.scoped)
    )

    it.effect("renewals move a held claim's lease on; a release gives it back, counting an abandoned attempt", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const workspace = Schema.decodeSync(WorkspaceId)("hooks-renew")
        yield* register(
          { url: "https://hooks.example.org/renew", events: ["tour-created"], auth: { type: "hmac", secret } },
          workspace
        )
        yield* Effect.forEach([0, 1, 2], (i) => tourCreated(`tour_renew${i}`).pipe(as(workspace)))
        yield* fanOut
        const store = yield* DeliveryStoreTag
        const claim = (now: number, leaseToken: string) =>
          store.claimDue({
            now,
            limit: 10,
            maxPerWebhook: 10,
            roomByWebhook: new Map(),
            leaseUntil: now + 6_000,
            leaseToken
          })
        const claimed = yield* claim(NOW, "token-r1")
        assert.strictEqual(claimed.length, 3)
        const [a, b, c] = claimed.map((item) => ({ deliveryId: item.id, leaseToken: "token-r1" }))
        // Renewed: still held past the first lease. A claim with another token is not renewed.
        const renewed = yield* store.renew(
          [a!, b!, c!, { deliveryId: a!.deliveryId, leaseToken: "token-x" }],
          NOW + 12_000
        )
        assert.deepStrictEqual([...renewed].sort(), [a!.deliveryId, b!.deliveryId, c!.deliveryId].sort())
        assert.strictEqual((yield* claim(NOW + 7_000, "token-r2")).length, 0)
        // Given back: `a` not started, `b` cut short; `c` stays held. Another token releases nothing.
        assert.strictEqual(
          yield* store.releaseClaims([
            { ...a!, abandoned: false },
            { ...b!, abandoned: true },
            { deliveryId: c!.deliveryId, leaseToken: "token-x", abandoned: true }
          ]),
          2
        )
        const again = yield* claim(NOW + 7_000, "token-r3")
        assert.deepStrictEqual(
          again.map((item) => [item.id, item.attempts, item.abandoned ?? 0]).sort(),
          [
            [a!.deliveryId, 0, 0],
            [b!.deliveryId, 0, 1]
          ].sort()
        )
        assert.strictEqual(attemptNumber(again.find((item) => item.id === b!.deliveryId)!), 2)
        // A renewal of claims taken over since finds nothing.
        assert.deepStrictEqual(yield* store.renew([a!, b!], NOW + 20_000), [])
      }).pipe(Effect.scoped)
    )

    it.effect(
      "an edit reaches every store: a claim after it carries the new target, even from a store that cached the old one",
      () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(NOW)
          const workspace = Schema.decodeSync(WorkspaceId)("hooks-edit")
          const hmac = { type: "hmac", secret }
          const webhook = yield* register(
            { url: "https://hooks.example.org/old", events: ["tour-created"], auth: hmac },
            workspace
          )
          yield* Effect.forEach([0, 1], (i) => tourCreated(`tour_edit${i}`).pipe(as(workspace)))
          yield* fanOut
          // Another process's store: its own cache of targets.
          const other = yield* Layer.build(DeliveryStore.layer).pipe(
            Effect.map((context) => context.unsafeMap.get(DeliveryStoreTag.key) as DeliveryStoreTag["Type"])
          )
          const claim = (store: DeliveryStoreTag["Type"], leaseToken: string) =>
            store.claimDue({
              now: NOW,
              limit: 1,
              maxPerWebhook: 1,
              roomByWebhook: new Map(),
              leaseUntil: NOW + 60_000,
              leaseToken
            })
          const before = yield* claim(other, "token-old")
          assert.deepStrictEqual(
            before.map((claimed) => [claimed.target.url, claimed.target.revision]),
            [["https://hooks.example.org/old", 1]]
          )
          const edited = yield* Effect.flatMap(WebhookService, (service) =>
            service.update(webhook.id, {
              url: "https://hooks.example.org/new",
              events: ["tour-created"],
              auth: { type: "hmac" }
            })
          ).pipe(as(workspace))
          assert.strictEqual(edited.url, "https://hooks.example.org/new")
          const after = yield* claim(other, "token-new")
          assert.deepStrictEqual(
            after.map((claimed) => [claimed.target.url, claimed.target.revision]),
            [["https://hooks.example.org/new", 2]]
          )
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ revision: number; created_at: number }>`
          SELECT revision, created_at FROM webhooks WHERE id = ${webhook.id}`
          assert.deepStrictEqual(
            rows.map((row) => [row.revision, Number(row.created_at)]),
            [[2, webhook.createdAt]]
          )
          const read = yield* Effect.flatMap(WebhookService, (service) => service.get(webhook.id)).pipe(as(workspace))
          assert.deepStrictEqual(read, edited)
        }).pipe(Effect.scoped)
    )

    it.effect("the outbox position: one lease holder at a time, events read in order behind it", () =>
      Effect.gen(function* () {
        const reader = yield* OutboxReaderTag
        const sql = yield* SqlClient.SqlClient
        // Start from the end of what earlier tests left.
        yield* Testing.eventsVisible
        const start = yield* reader.acquire("setup", NOW, NOW + 1)
        assert.isTrue(Option.isSome(start))
        let position = Option.getOrThrow(start)
        for (
          let read = (yield* reader.read(position, 1000)).events;
          read.length > 0;
          read = (yield* reader.read(position, 1000)).events
        ) {
          position = read.at(-1)!.position
        }
        assert.isTrue(yield* reader.advance("setup", position, 0))

        const a = yield* tourCreated("tour_outbox_a").pipe(as(wsA))
        const b = yield* tourCreated("tour_outbox_b").pipe(as(wsB))
        yield* Testing.eventsVisible
        const held = yield* reader.acquire("one", NOW, NOW + 10_000)
        assert.deepStrictEqual(held, Option.some(position))
        // Another owner waits for the lease to run out; the holder renews it.
        assert.isTrue(Option.isNone(yield* reader.acquire("two", NOW + 9_999, NOW + 20_000)))
        assert.isTrue(Option.isSome(yield* reader.acquire("one", NOW + 5_000, NOW + 15_000)))
        const { events } = yield* reader.read(position, 10)
        assert.deepStrictEqual(
          events.map((event) => [event.id, event.workspaceId]),
          [
            [a.id, wsA],
            [b.id, wsB]
          ]
        )
        assert.deepStrictEqual(found(yield* reader.read(events[0]!.position, 10)), {
          events: [events[1]!],
          waiting: false
        })
        assert.isFalse(yield* reader.advance("two", events[1]!.position, NOW + 20_000))
        assert.isTrue(yield* reader.advance("one", events[0]!.position, NOW + 15_000))
        // Past its lease, another owner takes over from the stored position.
        assert.deepStrictEqual(
          yield* reader.acquire("two", NOW + 15_000, NOW + 30_000),
          Option.some(events[0]!.position)
        )
        assert.isFalse(yield* reader.advance("one", events[1]!.position, NOW + 30_000))
        assert.isTrue(yield* reader.advance("two", events[1]!.position, 0))
        assert.deepStrictEqual(found(yield* reader.read(events[1]!.position, 10)), { events: [], waiting: false })

        // On PostgreSQL (PGlite has one connection): an event whose transaction is still open
        // holds back every later one, even committed, so the position never passes it; the
        // read says that one waits. A notification of the open transaction is covered only
        // once a read began after it ended.
        const [{ version }] = yield* sql<{ version: string }>`SELECT version()`
        if (version.includes("PGlite")) return
        const horizon = yield* PgOutboxReader.ReadHorizon
        const release = yield* Deferred.make<void>()
        const written = yield* Deferred.make<{ readonly id: string; readonly xid: string }>()
        const open = yield* Effect.fork(
          sql.withTransaction(
            Effect.gen(function* () {
              const event = yield* tourCreated("tour_outbox_slow").pipe(as(wsA))
              const [{ xid }] = yield* sql<{ xid: string }>`SELECT pg_current_xact_id()::text AS xid`
              yield* Deferred.succeed(written, { id: event.id, xid })
              yield* Deferred.await(release)
            })
          )
        )
        const slow = yield* Deferred.await(written)
        const later = yield* tourCreated("tour_outbox_later").pipe(as(wsA))
        assert.deepStrictEqual(found(yield* reader.read(events[1]!.position, 10)), { events: [], waiting: true })
        assert.isFalse(horizon.covers(slow.xid))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(open)
        yield* Testing.eventsVisible
        const after = yield* reader.read(events[1]!.position, 10)
        assert.deepStrictEqual(
          after.events.map((event) => event.id),
          [slow.id, later.id]
        )
        assert.isFalse(after.waiting)
        assert.isTrue(horizon.covers(slow.xid))
        assert.isFalse(horizon.covers("not a transaction"))

        // A notification that arrives while a read is under way is that read's to answer: the
        // listener need not wake fan-out, and the read, whose snapshot is older than the
        // notified transaction, says events wait, so fan-out reads again at once. A lock on the
        // outbox holds the read under way.
        const locked = yield* Deferred.make<void>()
        const unlock = yield* Deferred.make<void>()
        const lock = yield* Effect.fork(
          sql.withTransaction(
            Effect.zipRight(
              sql`LOCK TABLE events IN ACCESS EXCLUSIVE MODE`,
              Effect.zipRight(Deferred.succeed(locked, undefined), Deferred.await(unlock))
            )
          )
        )
        yield* Deferred.await(locked)
        const newer = (BigInt(slow.xid) + 1_000_000n).toString()
        assert.isFalse(horizon.covers(newer))
        const underWay = yield* Effect.fork(reader.read(events[1]!.position, 10))
        // Until the read is under way (it then waits for the lock), the notification is not covered.
        let covered = false
        for (let turn = 0; turn < 1000 && !covered; turn++) {
          yield* Effect.yieldNow()
          covered = horizon.covers(newer)
        }
        assert.isTrue(covered)
        yield* Deferred.succeed(unlock, undefined)
        yield* Fiber.join(lock)
        assert.isTrue((yield* Fiber.join(underWay)).waiting)
        // Answered once: with no read under way, the next notification wakes fan-out again.
        assert.isFalse(horizon.covers(newer))
      })
    )

    // PostgreSQL only (PGlite has one connection): a transaction that writes no event holds the
    // outbox's horizon, so it ends with no notification; `run` (polling once a minute here, on
    // the real clock) looks again on its own and delivers the event held behind it.
    it.effect("run delivers an event held behind an open transaction when it ends, with no notification", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [{ version }] = yield* sql<{ version: string }>`SELECT version()`
        if (version.includes("PGlite")) return
        yield* Ref.set(script, [200])
        const workspace = Schema.decodeSync(WorkspaceId)("hooks-waiting")
        yield* register(
          { url: "https://hooks.example.org/waiting", events: ["tour-created"], auth: { type: "hmac", secret } },
          workspace
        )
        yield* Testing.eventsVisible
        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const open = yield* Effect.fork(
          sql.withTransaction(
            Effect.zipRight(
              sql`SELECT pg_current_xact_id()`,
              Effect.zipRight(Deferred.succeed(held, undefined), Deferred.await(release))
            )
          )
        )
        yield* Deferred.await(held)
        const event = yield* tourCreated("tour_waiting").pipe(as(workspace))
        // The transaction ends once a read has said the event waits behind it.
        const reader = yield* OutboxReaderTag
        const sawWaiting = yield* Deferred.make<void>()
        const watching = OutboxReaderTag.of({
          ...reader,
          read: (position, limit) =>
            Effect.tap(reader.read(position, limit), (read) =>
              read.waiting ? Deferred.succeed(sawWaiting, undefined) : Effect.void
            )
        })
        const dispatcher = yield* Layer.build(DispatcherLayer({ pollIntervalMs: 60_000, timeoutMs: 1_000 })).pipe(
          Effect.provideService(OutboxReaderTag, watching),
          Effect.map((context) => context.unsafeMap.get(Dispatcher.key) as Dispatcher["Type"])
        )
        // `run` reads once as it starts; nothing wakes it after that.
        const running = yield* Effect.fork(dispatcher.run)
        yield* Deferred.await(sawWaiting)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(open)
        while ((yield* requestsFor(event.id)).length === 0) yield* Effect.sleep("5 millis")
        yield* Fiber.interrupt(running)
      }).pipe(Effect.scoped, Effect.timeout("20 seconds"), Effect.withClock(Clock.make()))
    )

    it.effect("replay steps look at a bounded window in event order; resend and replay leave pending ones alone", () =>
      Effect.gen(function* () {
        yield* Ref.set(script, [200])
        const workspace = Schema.decodeSync(WorkspaceId)("hooks-replay")
        yield* TestClock.setTime(NOW)
        const webhook = yield* register(
          { url: "https://hooks.example.org/replay", events: ["tour-created"], auth: { type: "hmac", secret } },
          workspace
        )
        const events: Array<{ id: string }> = []
        for (let i = 0; i < 5; i++) {
          yield* TestClock.setTime(NOW + i * 1_000)
          events.push(yield* tourCreated(`tour_replay${i}`).pipe(as(workspace)))
        }
        yield* settle
        const store = yield* DeliveryStoreTag
        const step = (after: Parameters<typeof store.replayStep>[0]["after"]) =>
          store.replayStep({
            workspaceId: workspace,
            webhookId: webhook.id,
            since: NOW / 1000 + 1,
            until: NOW / 1000 + 4,
            statuses: ["succeeded"],
            after,
            limit: 2,
            now: NOW + 10_000
          })
        const first = yield* step(undefined)
        assert.strictEqual(first.resent, 2)
        assert.isDefined(first.next)
        const second = yield* step(first.next)
        assert.deepStrictEqual(second, { resent: 1, next: undefined })
        // Pending now: a second replay finds nothing, a resend is refused.
        assert.deepStrictEqual(yield* step(undefined), { resent: 0, next: undefined })
        const claimed = yield* store.claimDue({
          now: NOW + 10_000,
          limit: 10,
          maxPerWebhook: 10,
          roomByWebhook: new Map(),
          leaseUntil: NOW + 60_000,
          leaseToken: "token-replay"
        })
        assert.deepStrictEqual(
          claimed.map((item) => [item.eventId, item.attempts, item.cycleStart, item.trigger]),
          events.slice(1, 4).map((event) => [event.id, 1, 1, "manual"])
        )
        const resent = yield* store.resend(workspace, webhook.id, claimed[0]!.id, NOW + 11_000)
        assert.strictEqual(resent._tag, "Pending")
        assert.strictEqual((yield* store.resend(workspace, webhook.id, "dlv_unknown", NOW))._tag, "NotFound")
        assert.strictEqual((yield* store.resend(wsB, webhook.id, claimed[0]!.id, NOW))._tag, "NotFound")
        const outside = yield* store.resend(
          workspace,
          webhook.id,
          (yield* Effect.flatMap(WebhookService, (service) => service.deliveries(webhook.id, { limit: 10 })).pipe(
            as(workspace)
          )).data.find((delivery) => delivery.eventId === events[0]!.id)!.id,
          NOW + 12_000
        )
        assert.strictEqual(outside._tag, "Resent")
        if (outside._tag === "Resent") {
          assert.strictEqual(outside.delivery.status, "pending")
          assert.deepStrictEqual(
            outside.delivery.attempts.map((attempt) => attempt.trigger),
            ["automatic"]
          )
        }
      })
    )

    // Fan-out records a batch in one statement (decision 0129): its deliveries and the position
    // after it go in together, only while it holds the lease, or not at all.
    it.effect("advanceInserting moves the position and inserts the deliveries together, or neither", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const reader = yield* OutboxReaderTag
        const sql = yield* SqlClient.SqlClient
        const advanceInserting = reader.advanceInserting!
        const workspace = Schema.decodeSync(WorkspaceId)("hooks-record")
        const webhook = yield* register(
          { url: "https://hooks.example.org/record", events: ["tour-created"], auth: { type: "hmac", secret } },
          workspace
        )
        const event = yield* tourCreated("tour_record").pipe(as(workspace))
        yield* Testing.eventsVisible
        const start = Option.getOrThrow(yield* reader.acquire("recorder", NOW, NOW + 10_000))
        let position = start
        for (let read = (yield* reader.read(position, 1000)).events; read.length > 0; ) {
          const found = read.find((each) => each.id === event.id)
          if (found !== undefined) {
            position = found.position
            break
          }
          position = read.at(-1)!.position
          read = (yield* reader.read(position, 1000)).events
        }
        const delivery = (id: string, workspaceId: WorkspaceId | null = workspace): NewDelivery =>
          ({
            id,
            workspaceId,
            webhookId: webhook.id,
            eventId: event.id,
            eventType: "tour-created",
            eventCreatedAt: Math.floor(NOW / 1000),
            createdAt: Math.floor(NOW / 1000),
            dueAt: NOW,
            body: "{}",
            target: { url: webhook.url }
          }) as NewDelivery
        const count = Effect.map(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = ${webhook.id}`,
          (rows) => rows[0]!.n
        )
        // Another owner's step moves nothing and inserts nothing.
        assert.isFalse(
          yield* advanceInserting("someone else", position, NOW + 10_000, [delivery(Id.makeAt("dlv", NOW))])
        )
        assert.strictEqual(yield* count, 0)
        assert.deepStrictEqual(yield* reader.acquire("recorder", NOW, NOW + 10_000), Option.some(start))
        // A row the insert refuses (no workspace) leaves the position where it was.
        const refused = yield* Effect.exit(
          advanceInserting("recorder", position, NOW + 10_000, [delivery(Id.makeAt("dlv", NOW), null)])
        )
        assert.isTrue(refused._tag === "Failure")
        assert.deepStrictEqual(yield* reader.acquire("recorder", NOW, NOW + 10_000), Option.some(start))
        assert.strictEqual(yield* count, 0)
        // The holder's step does both.
        assert.isTrue(yield* advanceInserting("recorder", position, 0, [delivery(Id.makeAt("dlv", NOW))]))
        assert.strictEqual(yield* count, 1)
        assert.deepStrictEqual(yield* reader.acquire("recorder", NOW, NOW + 1), Option.some(position))
        assert.isTrue(yield* reader.advance("recorder", position, 0))
      })
    )

    // Fan-out keeps the subscribers it read while the webhooks' version stays (decision 0129).
    it.effect(
      "fan-out sees a webhook registered, revised or deleted since its last read; a failure count changes nothing",
      () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(NOW)
          yield* Ref.set(script, [200])
          const reader = yield* OutboxReaderTag
          const repository = yield* WebhookRepository
          const workspace = Schema.decodeSync(WorkspaceId)("hooks-version")
          const version = Effect.map(reader.read("0:0", 1), (read) => read.webhooksVersion)
          const delivered = (tourId: string) =>
            Effect.gen(function* () {
              const event = yield* tourCreated(tourId).pipe(as(workspace))
              yield* settle
              return (yield* requestsFor(event.id)).map((received) => received.request.url)
            })
          const first = yield* register(
            { url: "https://hooks.example.org/version-1", events: ["tour-created"], auth: { type: "hmac", secret } },
            workspace
          )
          assert.deepStrictEqual(yield* delivered("tour_version_1"), ["https://hooks.example.org/version-1"])
          const before = yield* version
          assert.isString(before)
          // A failure counted moves no revision: the version stays.
          yield* repository.recordEndings(
            [{ workspaceId: workspace, webhookId: first.id, reset: false, failures: 1 }],
            0,
            0
          )
          assert.strictEqual(yield* version, before)
          const second = yield* register(
            { url: "https://hooks.example.org/version-2", events: ["tour-created"], auth: { type: "hmac", secret } },
            workspace
          )
          const registered = yield* version
          assert.notStrictEqual(registered, before)
          assert.deepStrictEqual((yield* delivered("tour_version_2")).sort(), [
            "https://hooks.example.org/version-1",
            "https://hooks.example.org/version-2"
          ])
          yield* Effect.flatMap(WebhookService, (service) =>
            service.update(first.id, {
              url: "https://hooks.example.org/version-1",
              events: ["tour-edited"],
              auth: { type: "hmac" }
            })
          ).pipe(as(workspace))
          const revised = yield* version
          assert.notStrictEqual(revised, registered)
          assert.deepStrictEqual(yield* delivered("tour_version_3"), ["https://hooks.example.org/version-2"])
          yield* Effect.flatMap(WebhookService, (service) => service.delete(second.id)).pipe(as(workspace))
          assert.notStrictEqual(yield* version, revised)
          assert.deepStrictEqual(yield* delivered("tour_version_4"), [])
        })
    )

    it.effect("deleting a webhook removes it and its deliveries", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        yield* Ref.set(script, [500])
        const workspace = Schema.decodeSync(WorkspaceId)("hooks-f")
        const webhook = yield* register(
          { url: "https://hooks.example.org/f", events: ["tour-created"], auth: { type: "hmac", secret } },
          workspace
        )
        yield* tourCreated("tour_f1").pipe(as(workspace))
        yield* settle
        yield* Effect.flatMap(WebhookService, (service) => service.delete(webhook.id)).pipe(as(workspace))
        const rows = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = ${webhook.id}`
        )
        assert.strictEqual(rows[0]!.n, 0)
        const listed = yield* Effect.flatMap(WebhookService, (service) => service.list({})).pipe(as(workspace))
        assert.strictEqual(listed.data.length, 0)
      })
    )
  }
)
