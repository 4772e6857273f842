/**
 * The storage port for webhooks. Every method is scoped to a workspace: a webhook of another
 * workspace is never found, listed, deleted or subscribed. Storage failures are defects (the
 * HTTP layer answers 500 without details).
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

/**
 * @since 0.1.0
 */
export class WebhookRepository extends Context.Tag("@waybill/webhooks/WebhookRepository")<
  WebhookRepository,
  {
    /**
     * Stores a new webhook (fresh id; its secret already sealed) unless its workspace already
     * holds `limit` webhooks: then nothing is stored and the answer is `false`. Counting and
     * storing are one step for the workspace: of registrations arriving together at `limit - 1`,
     * exactly one is stored, whichever process runs them (PostgreSQL: a per-workspace advisory
     * lock held by the transaction that counts and inserts).
     */
    readonly insert: (webhook: Webhook, limit: number) => Effect.Effect<boolean>
    readonly get: (workspaceId: WorkspaceId, id: string) => Effect.Effect<Option.Option<Webhook>>
    /** Newest first (by id), `limit` after the id `after`; pages built with `Page.make("whk", …)`. */
    readonly list: (workspaceId: WorkspaceId, query: Page.Query) => Effect.Effect<Page.Page<Webhook>>
    /**
     * Replaces a stored webhook's settings (`url`, `events`, `filters`, `auth`, `description`)
     * and raises its `revision` by one, atomically (two edits never share a revision); `id`,
     * `workspaceId` and `createdAt` stay. Only while the stored revision is still
     * `webhook.revision` (the one the change was computed from), so a change made meanwhile (an
     * edit, a rotation, a sweep) is never overwritten unseen. Returns the webhook as stored, or
     * none when there is no webhook with this id in the workspace or its revision has moved on
     * (read it again to tell which).
     */
    readonly update: (webhook: Webhook) => Effect.Effect<Option.Option<Webhook>>
    /**
     * Deletes the previous HMAC secret of at most `limit` webhooks whose rotation overlap ended
     * at or before `now` (epoch seconds), raising their revision; answers how many (any
     * workspace: this is maintenance, `SecretRotation.sweepExpiredSecrets`).
     */
    readonly deleteExpiredSecrets: (now: number, limit: number) => Effect.Effect<number>
    /**
     * Automatic disabling (contract §8): adds each webhook's deliveries that ended to its count of
     * deliveries in a row that ended `failed` (a success starts it again, `FlowControl.nextStreak`),
     * and disables, with reason `failing` at `now` (epoch seconds) and a new revision, each enabled
     * one whose count reached `threshold`. Answers the webhooks it disabled. Atomic per webhook,
     * so processes counting at once lose no ending.
     */
    readonly recordEndings: (
      endings: ReadonlyArray<Endings>,
      threshold: number,
      now: number
    ) => Effect.Effect<ReadonlyArray<Webhook>>
    /** Removes a webhook; `false` when there was none with this id in the workspace. */
    readonly delete: (workspaceId: WorkspaceId, id: string) => Effect.Effect<boolean>
    /**
     * The webhooks of a workspace subscribed to an event type, in id order. Fan-out calls it
     * inside its transaction, once per (workspace, event type) of a batch.
     */
    readonly subscribed: (workspaceId: WorkspaceId, eventType: EventType) => Effect.Effect<ReadonlyArray<Webhook>>
  }
>() {}

/**
 * An in-memory repository.
 * @since 0.1.0
 */
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

/**
 * An in-memory layer, for tests and embedders without storage.
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<WebhookRepository> = Layer.sync(WebhookRepository, makeMemory)
