// The webhook service's operations on a webhook's delivery log: list, resend, replay, statistics
// and failure alerts. Each finds the webhook in the caller's workspace first, so another
// workspace's webhook is never reached.
import * as ValidationError from "@waybill/core/ValidationError"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberId from "effect/FiberId"
import * as DeliveryStats from "../DeliveryStats.js"
import type * as DeliveryStore from "../DeliveryStore.js"
import type * as Page from "../Page.js"
import * as Replay from "../Replay.js"
import * as Retention from "../Retention.js"
import { type Env, find, nowSeconds, pageQuery } from "./env.js"
import type { WebhookNotFound } from "./errors.js"

/** The delivery log's operations over `env`. */
export const make = (env: Env) => {
  const { deliveryStore, settings } = env

  const deliveries = Effect.fn("WebhookService.deliveries")(function* (id: string, params: Page.Params) {
    const webhook = yield* find(env, id)
    const query = yield* pageQuery("dlv", params)
    return yield* deliveryStore.list(webhook.workspaceId, webhook.id, query)
  })

  const resend = Effect.fn("WebhookService.resend")(function* (id: string, deliveryId: string) {
    const webhook = yield* find(env, id)
    const result = yield* deliveryStore.resend(
      webhook.workspaceId,
      webhook.id,
      deliveryId,
      yield* Clock.currentTimeMillis
    )
    switch (result._tag) {
      case "Resent":
        return result.delivery
      case "NotFound":
        return yield* Effect.fail(Replay.DeliveryNotFound.of(deliveryId))
      case "Pending":
        return yield* Effect.fail(Replay.DeliveryPending.of(deliveryId, result.held))
    }
  })

  const replay = Effect.fn("WebhookService.replay")(function* (id: string, input: unknown) {
    const webhook = yield* find(env, id)
    // The retention in context: `since` reaches back no further than the data kept.
    const { retentionMs } = yield* Retention.Window
    const window = yield* Either.match(Replay.validate(input, yield* nowSeconds, retentionMs / 1000), {
      onLeft: (issues) => Effect.fail(ValidationError.fromIssues(issues, "replay")),
      onRight: Effect.succeed
    })
    let resent = 0
    let after: DeliveryStore.ReplayCursor | undefined
    // Step by step, each its own short statement, so a replay of 100 000 deliveries neither
    // holds one long transaction nor keeps the dispatchers from claiming what is already due.
    do {
      const step = yield* deliveryStore.replayStep({
        workspaceId: webhook.workspaceId,
        webhookId: webhook.id,
        since: window.since,
        until: window.until,
        statuses: window.statuses,
        after,
        limit: settings.stepSize,
        now: yield* Clock.currentTimeMillis
      })
      resent += step.resent
      after = step.next
      yield* Effect.yieldNow()
    } while (after !== undefined)
    return { deliveries: resent }
  })

  // A window's statistics asked for while the same window's are being read join that read: ten
  // consoles opening one webhook at once cost one lookup of the webhook and one read (decision
  // 0132). A finished read is not kept, so a request that starts after a write reads it. The
  // read runs on its own fiber, so a caller that goes away leaves it to the others. Reads of
  // different windows take turns, `concurrentStatsReads` at a time (decision 0134): ten consoles
  // on ten webhooks never hold the pool and the event loop from the other requests.
  const readTurns = Effect.unsafeMakeSemaphore(settings.concurrentStatsReads)
  const reading = new Map<string, Deferred.Deferred<DeliveryStats.DeliveryStats, WebhookNotFound>>()
  const readStats = (id: string, window: DeliveryStats.StatsWindow) =>
    Effect.flatMap(CurrentWorkspace, (workspace) => {
      const key = `${workspace.id}\u0000${id}\u0000${window.since}\u0000${window.hours}`
      const joined = reading.get(key)
      if (joined !== undefined) return Deferred.await(joined)
      const read = Deferred.unsafeMake<DeliveryStats.DeliveryStats, WebhookNotFound>(FiberId.none)
      reading.set(key, read)
      const stats = Effect.flatMap(find(env, id), (webhook) =>
        readTurns.withPermits(1)(deliveryStore.stats(webhook.workspaceId, webhook.id, window))
      )
      return Effect.zipRight(
        Effect.forkDaemon(
          Effect.flatMap(Effect.exit(stats), (exit) => {
            reading.delete(key)
            return Deferred.done(read, exit)
          })
        ),
        Deferred.await(read)
      )
    })

  const stats = Effect.fn("WebhookService.stats")(function* (id: string, params: DeliveryStats.StatsParams) {
    const hours = DeliveryStats.hoursOf(params)
    // A webhook not found answers before bad hours do.
    if (Either.isLeft(hours)) {
      yield* find(env, id)
      return yield* Effect.fail(ValidationError.fromIssues(hours.left, "query"))
    }
    return yield* readStats(id, DeliveryStats.windowOf(yield* nowSeconds, hours.right))
  })

  const alerts = Effect.fn("WebhookService.alerts")(function* (
    params: Page.Params & { readonly webhookId?: string | undefined }
  ) {
    const workspace = yield* CurrentWorkspace
    const query = yield* pageQuery("alr", params)
    return yield* env.failureAlerts.list(workspace.id, { ...query, webhookId: params.webhookId })
  })

  return { deliveries, resend, replay, stats, alerts }
}
