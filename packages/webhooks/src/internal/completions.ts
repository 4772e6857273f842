/**
 * Writing attempt results: completions in one atomic write, and, when some delivery failed for
 * good, its failure alert raised in the same transaction and logged once it is committed.
 */
import * as Id from "@waybill/core/Id"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { maxAttempts } from "../Delivery.js"
import type { FailureAlert } from "../FailureAlerts.js"
import type { Outcome } from "./attempts.js"
import type { Env } from "./loopState.js"

/**
 * Writes completions; the alerts of deliveries that failed for good go in the same
 * transaction. A batch without such failures is one atomic write, with no transaction.
 */
export const persist = (env: Env, batch: ReadonlyArray<Outcome>) =>
  Effect.gen(function* () {
    const completions = batch.map((item) => item.completion)
    if (!batch.some((item) => item.completion.status === "failed")) {
      yield* env.store.complete(completions)
      return
    }
    const now = yield* Clock.currentTimeMillis
    const raised = yield* env.transactor.withTransaction(
      Effect.gen(function* () {
        const applied = new Set(yield* env.store.complete(completions))
        const out: Array<FailureAlert> = []
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
          out.push(alert)
        }
        return out
      })
    )
    for (const alert of raised) {
      yield* Effect.logError("Webhook delivery failed").pipe(
        Effect.annotateLogs({
          alertId: alert.id,
          webhookId: alert.webhookId,
          deliveryId: alert.deliveryId,
          eventId: alert.eventId,
          eventType: alert.eventType,
          reason: alert.reason
        })
      )
    }
  })
