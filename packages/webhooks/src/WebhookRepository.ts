/**
 * The storage port for webhooks, scoped by workspace; what an adapter must do: docs/webhooks.md (Ports).
 * @since 0.1.0
 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import type { EventType } from "@waybill/events/EventType"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type Endings, nextStreak } from "./FlowControl.js"
import * as Page from "./Page.js"
import type { Webhook } from "./Webhook.js"

/** @since 0.1.0 */
export class WebhookRepository extends Context.Tag("@waybill/webhooks/WebhookRepository")<
  WebhookRepository,
  {
    /** Stores a new webhook unless its workspace holds `limit` (`false`), counting and storing in one step. */
    readonly insert: (webhook: Webhook, limit: number) => Effect.Effect<boolean>
    readonly get: (workspaceId: WorkspaceId, id: string) => Effect.Effect<Option.Option<Webhook>>
    /** Newest first (by id), `limit` after the id `after`. */
    readonly list: (workspaceId: WorkspaceId, query: Page.Query) => Effect.Effect<Page.Page<Webhook>>
    /** Replaces settings and raises `revision`, only while the stored revision is `webhook.revision`. */
    readonly update: (webhook: Webhook) => Effect.Effect<Option.Option<Webhook>>
    /** Deletes at most `limit` previous HMAC secrets expired by `now` (epoch s), in any workspace. */
    readonly deleteExpiredSecrets: (now: number, limit: number) => Effect.Effect<number>
    /** Counts failures in a row, disabling (`failing`) webhooks that reach `threshold`; atomic per webhook. */
    readonly recordEndings: (
      endings: ReadonlyArray<Endings>,
      threshold: number,
      now: number
    ) => Effect.Effect<ReadonlyArray<Webhook>>
    /** Removes a webhook; `false` when there was none with this id in the workspace. */
    readonly delete: (workspaceId: WorkspaceId, id: string) => Effect.Effect<boolean>
    /** The webhooks of a workspace subscribed to an event type, in id order. */
    readonly subscribed: (workspaceId: WorkspaceId, eventType: EventType) => Effect.Effect<ReadonlyArray<Webhook>>
  }
>() {}

/** An in-memory repository. @since 0.1.0 */
export const makeMemory = (): WebhookRepository["Type"] => {
  const workspaces = new Map<string, Map<string, Webhook>>()
  const streaks = new Map<string, number>()
  const webhooks = (workspaceId: WorkspaceId): Map<string, Webhook> =>
    workspaces.get(workspaceId) ?? workspaces.set(workspaceId, new Map()).get(workspaceId)!
  return WebhookRepository.of({
    // One synchronous step: nothing runs between the count and the store.
    insert: (webhook, limit) =>
      Effect.sync(() => {
        const stored = webhooks(webhook.workspaceId)
        if (stored.size >= limit) return false
        stored.set(webhook.id, webhook)
        return true
      }),
    get: (workspaceId, id) => Effect.sync(() => Option.fromNullable(webhooks(workspaceId).get(id))),
    list: (workspaceId, query) =>
      Effect.sync(() => {
        const rows = Array.from(webhooks(workspaceId).values())
          .filter((webhook) => query.after === undefined || webhook.id < query.after)
          .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
          .slice(0, query.limit + 1)
        return Page.make("whk", rows, query.limit, (webhook) => webhook.id)
      }),
    update: (webhook) =>
      Effect.sync(() => {
        const stored = webhooks(webhook.workspaceId).get(webhook.id)
        if (stored === undefined || stored.revision !== webhook.revision) return Option.none()
        const updated: Webhook = { ...webhook, createdAt: stored.createdAt, revision: stored.revision + 1 }
        if (webhook.status === "enabled" && stored.status === "disabled") streaks.delete(webhook.id)
        webhooks(webhook.workspaceId).set(webhook.id, updated)
        return Option.some(updated)
      }),
    deleteExpiredSecrets: (now, limit) =>
      Effect.sync(() => {
        let deleted = 0
        for (const map of workspaces.values()) {
          for (const webhook of map.values()) {
            if (deleted >= limit) return deleted
            const auth = webhook.auth
            if (auth.type !== "hmac" || auth.previous === undefined || auth.previous.expiresAt > now) continue
            const { previous: _previous, ...kept } = auth
            map.set(webhook.id, { ...webhook, auth: kept, revision: webhook.revision + 1 })
            deleted++
          }
        }
        return deleted
      }),
    recordEndings: (endings, threshold, now) =>
      Effect.sync(() => {
        const disabled: Array<Webhook> = []
        for (const ending of endings) {
          const map = webhooks(ending.workspaceId as WorkspaceId)
          const webhook = map.get(ending.webhookId)
          if (webhook === undefined) continue
          const streak = nextStreak(streaks.get(webhook.id) ?? 0, ending)
          streaks.set(webhook.id, streak)
          if (threshold > 0 && streak >= threshold && webhook.status === "enabled") {
            const updated: Webhook = {
              ...webhook,
              status: "disabled",
              disabledReason: "failing",
              disabledAt: now,
              revision: webhook.revision + 1
            }
            map.set(webhook.id, updated)
            disabled.push(updated)
          }
        }
        return disabled
      }),
    delete: (workspaceId, id) => Effect.sync(() => webhooks(workspaceId).delete(id)),
    subscribed: (workspaceId, eventType) =>
      Effect.sync(() =>
        Array.from(webhooks(workspaceId).values())
          .filter((webhook) => webhook.events.includes(eventType))
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      )
  })
}

/** An in-memory layer, for tests and embedders without storage. @since 0.1.0 */
export const layerMemory: Layer.Layer<WebhookRepository> = Layer.sync(WebhookRepository, makeMemory)
