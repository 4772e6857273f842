/** Writing attempt results, with the alerts of deliveries that failed for good in the same transaction. */
import * as Id from "@waybill/core/Id"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { maxAttempts } from "../Delivery.js"
import { attemptNumber } from "../DeliveryStore.js"
import type { FailureAlert } from "../FailureAlerts.js"
import * as FlowControl from "../FlowControl.js"
import { targetOf } from "../Webhook.js"
import type { Outcome } from "./attempts.js"
import type { Env } from "./env.js"

/** Writes completions; a batch without final failures is one atomic write, with no transaction. */
export const persist = (env: Env, batch: ReadonlyArray<Outcome>) =>
  Effect.gen(function* () {
    const completions = batch.map((item) => item.completion)
    if (!batch.some((item) => item.completion.status === "failed")) {
      const applied = yield* env.store.complete(completions)
      yield* countEndings(env, batch, applied)
      return
    }
    const now = yield* Clock.currentTimeMillis
    const { raised, applied } = yield* env.transactor.withTransaction(
      Effect.gen(function* () {
        const applied = new Set(yield* env.store.complete(completions))
        const out: Array<{ readonly alert: FailureAlert; readonly attempt: number }> = []
        for (const item of batch) {
          if (item.completion.status !== "failed" || !applied.has(item.completion.deliveryId)) continue
          const alert: FailureAlert = {
            id: Id.makeAt("alr", now),
            webhookId: item.claimed.webhookId,
            deliveryId: item.claimed.id,
            eventId: item.claimed.eventId,
            eventType: item.claimed.eventType,
            reason: `${maxAttempts} attempts failed; last: ${item.detail}`,
            createdAt: Math.floor(now / 1000)
          }
          yield* env.alerts.raise(item.claimed.workspaceId, alert)
          out.push({ alert, attempt: attemptNumber(item.claimed) })
        }
        return { raised: out, applied }
      })
    )
    yield* countEndings(env, batch, applied)
    for (const { alert, attempt } of raised) {
      yield* Effect.logError("Webhook delivery failed").pipe(
        Effect.annotateLogs({
          alertId: alert.id,
          attempt,
          webhookId: alert.webhookId,
          deliveryId: alert.deliveryId,
          eventId: alert.eventId,
          eventType: alert.eventType,
          reason: alert.reason
        })
      )
    }
  })

/** Automatic disabling: counts `batch`'s endings in storage and holds the deliveries of webhooks it disables. */
export const countEndings = (env: Env, batch: ReadonlyArray<Outcome>, applied?: Iterable<string>) =>
  Effect.gen(function* () {
    const threshold = env.settings.disableAfterFailures
    if (threshold <= 0) return
    const written = applied === undefined ? undefined : new Set(applied)
    const endings = FlowControl.endingsOf(
      batch
        .filter((item) => written === undefined || written.has(item.completion.deliveryId))
        .map((item) => ({
          workspaceId: item.claimed.workspaceId,
          webhookId: item.claimed.webhookId,
          status: item.completion.status
        }))
    )
    if (endings.length === 0) return
    const now = yield* Clock.currentTimeMillis
    const disabled = yield* env.repository.recordEndings(endings, threshold, Math.floor(now / 1000))
    for (const webhook of disabled) {
      yield* env.store.retarget(webhook.workspaceId, targetOf(webhook))
      yield* env.store.hold(webhook.workspaceId, webhook.id, now)
      yield* Effect.logWarning("A webhook was disabled: its deliveries failed too many times in a row").pipe(
        Effect.annotateLogs({ webhookId: webhook.id, failuresInARow: threshold })
      )
    }
  })
