import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventIntake from "@waybill/events/EventIntake"
import type * as Delivery from "@waybill/webhooks/Delivery"
import * as DeliveryStats from "@waybill/webhooks/DeliveryStats"
import { Dispatcher } from "@waybill/webhooks/Dispatcher"
import * as HttpSender from "@waybill/webhooks/HttpSender"
import { WebhookService } from "@waybill/webhooks/WebhookService"
import { Effect, Schema, TestClock } from "effect"
import * as Testing from "../src/Testing.js"
import { forEachBackend, webhookStack } from "./harness.js"

const NOW = 1_798_000_000_000
const HOUR = 3_600_000
const workspace = Schema.decodeSync(WorkspaceId)("stats-a")
const other = Schema.decodeSync(WorkspaceId)("stats-b")

const as = (workspaceId: WorkspaceId) => Effect.provideService(CurrentWorkspace, { id: workspaceId, apiKeyId: "k" })

const register = (path: string) =>
  Effect.flatMap(WebhookService, (service) =>
    service.register({
      url: `https://hooks.example.org/${path}`,
      events: ["tour-created"],
      auth: { type: "hmac", secret: "an-hmac-secret-of-some-length" }
    })
  ).pipe(as(workspace))

const tourCreated = (id: string) =>
  EventIntake.publish({
    type: "tour-created",
    payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
  }).pipe(as(workspace))

const settle = Effect.zipRight(
  Testing.eventsVisible,
  Effect.flatMap(Dispatcher, (dispatcher) => Effect.zipRight(dispatcher.fanOutAll, dispatcher.deliverDue))
)

const statsOf = (webhookId: string, hours?: string, workspaceId = workspace) =>
  Effect.flatMap(WebhookService, (service) => service.stats(webhookId, hours === undefined ? {} : { hours })).pipe(
    as(workspaceId)
  )

const at = (ms: number) => TestClock.setTime(NOW + ms)

forEachBackend(
  "Delivery statistics",
  webhookStack(
    // Tour "fail" gets 500 twice (failed after its retry), "wait" a 503 (its retry is due
    // later); the rest 200.
    HttpSender.layerScripted((request) =>
      Effect.succeed({
        statusCode: request.body.includes('"fail"') ? 500 : request.body.includes('"wait"') ? 503 : 200
      })
    ),
    { retryDelayMs: 10_000, timeoutMs: 1_000 }
  ),
  (it) => {
    it.effect(
      "the hours agree with a count of the deliveries through resends, replays, holds and releases; SQL buckets as DeliveryStats",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const values = [0, 1, 63, 64, 65, 127, 128, 250, 1_023, 1_024, 4_095, 60_000, 65_535, 1_000_000, 2 ** 30]
          const buckets = yield* sql<{ bucket: number }>`
          SELECT waybill_latency_bucket(v) AS bucket FROM unnest(${`{${values.join(",")}}`}::int[]) WITH ORDINALITY AS t(v, n)
          ORDER BY n`
          assert.deepStrictEqual(
            buckets.map((row) => row.bucket),
            values.map(DeliveryStats.latencyBucket)
          )
          yield* at(0)
          const webhook = yield* register("agree")
          yield* at(-5 * HOUR)
          for (const id of ["one", "two", "fail"]) yield* tourCreated(id)
          yield* at(-5 * HOUR + 120)
          yield* settle
          // The retry of "fail", 10 s on: failed.
          yield* at(-5 * HOUR + 20_000)
          yield* settle
          yield* at(-2 * HOUR)
          for (const id of ["three", "four"]) yield* tourCreated(id)
          yield* at(-2 * HOUR + 70_000)
          yield* settle
          yield* at(-2 * HOUR + 90_000)
          yield* settle
          yield* at(0)
          // The statistics as the deliveries themselves give them, beside what the store keeps.
          const agree = (what: string) =>
            Effect.gen(function* () {
              const rows = yield* sql<{
                event_created_at: number
                status: Delivery.DeliveryStatus
                latency_ms: number | null
              }>`
              SELECT event_created_at, status, latency_ms FROM deliveries WHERE webhook_id = ${webhook.id}`
              const window = DeliveryStats.windowOf(NOW / 1000, 24)
              const counted = DeliveryStats.summarize(
                window,
                rows.map((row) => ({
                  eventCreatedAt: Number(row.event_created_at),
                  status: row.status,
                  latencyMs: row.latency_ms
                }))
              )
              assert.deepStrictEqual(yield* statsOf(webhook.id), counted, what)
              return counted
            })
          const settled = yield* agree("after the first attempts")
          assert.deepStrictEqual([settled.succeeded, settled.failed], [4, 1])
          const log = yield* Effect.flatMap(WebhookService, (service) =>
            service.deliveries(webhook.id, { limit: 10 })
          ).pipe(as(workspace))
          for (const delivery of log.data.slice(0, 2)) {
            yield* Effect.flatMap(WebhookService, (service) => service.resend(webhook.id, delivery.id)).pipe(
              as(workspace)
            )
          }
          assert.strictEqual((yield* agree("two sent again, not yet ended")).pending, 2)
          yield* settle
          yield* agree("sent again and ended")
          yield* Effect.flatMap(WebhookService, (service) =>
            service.replay(webhook.id, { since: NOW / 1000 - 86_400, status: "all" })
          ).pipe(as(workspace))
          assert.strictEqual((yield* agree("replayed")).pending, 5)
          yield* settle
          yield* at(20_000)
          yield* settle
          const replayed = yield* agree("replayed and ended, the failing one after its retry")
          assert.deepStrictEqual([replayed.succeeded, replayed.failed], [4, 1])
          // Disabled, its waiting deliveries are held; enabled, pending again.
          yield* Effect.flatMap(WebhookService, (service) =>
            service.replay(webhook.id, { since: NOW / 1000 - 86_400, status: "all" })
          ).pipe(as(workspace))
          yield* Effect.flatMap(WebhookService, (service) => service.disable(webhook.id)).pipe(as(workspace))
          assert.strictEqual((yield* agree("held")).held, 5)
          yield* Effect.flatMap(WebhookService, (service) => service.enable(webhook.id)).pipe(as(workspace))
          assert.strictEqual((yield* agree("released")).pending, 5)
        })
    )

    it.effect("counted in SQL by status and hour over the window, with the latency of the deliveries that ended", () =>
      Effect.gen(function* () {
        const webhook = yield* register("stats")
        // Outside the 24 h window: 30 h ago, 100 ms to its response.
        yield* at(-30 * HOUR)
        yield* tourCreated("old")
        yield* at(-30 * HOUR + 100)
        yield* settle
        // 23 h ago, in the window's first hour: two that succeed 250 ms after their recording.
        yield* at(-23 * HOUR)
        yield* tourCreated("a")
        yield* tourCreated("b")
        yield* at(-23 * HOUR + 250)
        yield* settle
        // Only the later events reach the second webhook.
        const later = yield* register("later")
        // 2 h 10 min ago: one that fails, its retry ending 60 s after its recording.
        yield* at(-130 * 60_000)
        yield* tourCreated("fail")
        yield* settle
        yield* at(-130 * 60_000 + 60_000)
        yield* settle
        // 20 min ago, in the current hour: one waiting for its retry.
        yield* at(-20 * 60_000)
        yield* tourCreated("wait")
        yield* settle
        yield* at(0)

        // NOW is 1,600 s into its hour: the window starts 23 whole hours before that hour.
        const hourStart = NOW / 1000 - 1_600
        const since = hourStart - 23 * 3_600
        const day = yield* statsOf(webhook.id)
        assert.deepStrictEqual(
          { ...day, buckets: day.buckets.filter((bucket) => bucket.succeeded + bucket.failed > 0) },
          {
            succeeded: 2,
            failed: 1,
            pending: 1,
            held: 0,
            // 250 and 60,000 ms, each read as its histogram bucket's floor.
            latencyMs: { p50: 248, p95: 59_392 },
            buckets: [
              { start: since, succeeded: 2, failed: 0 },
              { start: since + 21 * 3_600, succeeded: 0, failed: 1 }
            ]
          }
        )
        assert.deepStrictEqual(
          day.buckets.map((bucket) => [bucket.start, bucket.succeeded + bucket.failed]),
          Array.from({ length: 24 }, (_, i) => [since + i * 3_600, i === 0 ? 2 : i === 21 ? 1 : 0])
        )
        const week = yield* statsOf(webhook.id, "168")
        assert.deepStrictEqual([week.succeeded, week.failed, week.pending, week.buckets.length], [3, 1, 1, 168])
        assert.deepStrictEqual(week.latencyMs, { p50: 248, p95: 59_392 })
        assert.deepStrictEqual(yield* statsOf(webhook.id, "1"), {
          succeeded: 0,
          failed: 0,
          pending: 1,
          held: 0,
          latencyMs: null,
          buckets: [{ start: hourStart, succeeded: 0, failed: 0 }]
        })

        // The second webhook: its own deliveries only; disabled, its waiting delivery is held and
        // counts as held, not pending.
        yield* Effect.flatMap(WebhookService, (service) => service.disable(later.id)).pipe(as(workspace))
        const second = yield* statsOf(later.id)
        assert.deepStrictEqual(
          [second.succeeded, second.failed, second.pending, second.held, second.latencyMs],
          [0, 1, 0, 1, { p50: 59_392, p95: 59_392 }]
        )

        const refused = yield* Effect.flip(statsOf(webhook.id, "0"))
        assert.strictEqual(refused._tag, "ValidationError")
        assert.strictEqual((yield* Effect.flip(statsOf(webhook.id, undefined, other)))._tag, "WebhookNotFound")
      })
    )
  }
)
