import { assert } from "@effect/vitest"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventIntake from "@waybill/events/EventIntake"
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
    it.effect("counted in SQL by status and hour over the window, with the latency of the deliveries that ended", () =>
      Effect.gen(function* () {
        const webhook = yield* register("stats")
        // Outside the 24 h window: 30 h ago, 100 ms to its response.
        yield* at(-30 * HOUR)
        yield* tourCreated("old")
        yield* at(-30 * HOUR + 100)
        yield* settle
        // 23.5 h ago: two that succeed 250 ms after their recording.
        yield* at(-23.5 * HOUR)
        yield* tourCreated("a")
        yield* tourCreated("b")
        yield* at(-23.5 * HOUR + 250)
        yield* settle
        // Only the later events reach the second webhook.
        const later = yield* register("later")
        // 2 h 10 min ago: one that fails, its retry ending 60 s after its recording.
        yield* at(-130 * 60_000)
        yield* tourCreated("fail")
        yield* settle
        yield* at(-130 * 60_000 + 60_000)
        yield* settle
        // 30 min ago: one waiting for its retry.
        yield* at(-30 * 60_000)
        yield* tourCreated("wait")
        yield* settle
        yield* at(0)

        const since = NOW / 1000 - 86_400
        const day = yield* statsOf(webhook.id)
        assert.deepStrictEqual(
          { ...day, buckets: day.buckets.filter((bucket) => bucket.succeeded + bucket.failed > 0) },
          {
            succeeded: 2,
            failed: 1,
            pending: 1,
            held: 0,
            latencyMs: { p50: 250, p95: 60_000 },
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
        assert.deepStrictEqual(week.latencyMs, { p50: 250, p95: 60_000 })
        assert.deepStrictEqual(yield* statsOf(webhook.id, "1"), {
          succeeded: 0,
          failed: 0,
          pending: 1,
          held: 0,
          latencyMs: null,
          buckets: [{ start: NOW / 1000 - 3_600, succeeded: 0, failed: 0 }]
        })

        // The second webhook: its own deliveries only; disabled, its waiting delivery is held and
        // counts as held, not pending.
        yield* Effect.flatMap(WebhookService, (service) => service.disable(later.id)).pipe(as(workspace))
        const second = yield* statsOf(later.id)
        assert.deepStrictEqual(
          [second.succeeded, second.failed, second.pending, second.held, second.latencyMs],
          [0, 1, 0, 1, { p50: 60_000, p95: 60_000 }]
        )

        const refused = yield* Effect.flip(statsOf(webhook.id, "0"))
        assert.strictEqual(refused._tag, "ValidationError")
        assert.strictEqual((yield* Effect.flip(statsOf(webhook.id, undefined, other)))._tag, "WebhookNotFound")
      })
    )
  }
)
