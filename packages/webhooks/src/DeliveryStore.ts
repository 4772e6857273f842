/**
 * The storage port for deliveries and their attempts: fan-out inserts them, dispatchers claim due
 * ones under a lease and complete what they claimed, only while their lease holds. Times are epoch
 * milliseconds from the dispatcher's `Clock`; storage failures are defects. Details:
 * docs/internals.md (DeliveryStore).
 * @since 0.1.0
 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Attempt, DeliveryLog, DeliveryStatus, Trigger } from "./Delivery.js"
import type { DeliveryStats, StatsWindow } from "./DeliveryStats.js"
import type * as Page from "./Page.js"
import type { Target } from "./Webhook.js"

/**
 * A delivery made at fan-out. `body` and `target` come along so that a store may keep them
 * with the row; a relational store may instead join them from the events and webhooks tables.
 * Its id is derived from event and webhook, so a store keeps the first row for an id and
 * ignores a second one (the same event fanned out again after a crash). One made while its
 * webhook is disabled (`target.status`) is stored `held` (`statusOf`).
 * @since 0.1.0
 */
export interface NewDelivery {
  readonly id: string
  readonly workspaceId: WorkspaceId
  readonly webhookId: string
  readonly eventId: string
  readonly eventType: string
  /** When its event was created (epoch seconds): what a replay's window selects on. */
  readonly eventCreatedAt: number
  /** Epoch seconds. */
  readonly createdAt: number
  /** Epoch milliseconds: due at once. */
  readonly dueAt: number
  readonly body: string
  readonly target: Target
  /** Its event's W3C `traceparent` (contract §8 "Tracing"); absent for an event without one. */
  readonly traceparent?: string | null | undefined
  /** Set when the dispatcher that fans out delivers it itself: it is claimed as it is made. */
  readonly lease?: { readonly until: number; readonly token: string } | undefined
  /**
   * Set when its first attempt ended before the delivery was recorded: `succeeded`, or
   * `pending` with `dueAt` the retry time. Default `pending` with no attempt.
   */
  readonly outcome?:
    | {
        readonly status: DeliveryStatus
        readonly attempt: Attempt
        /** As in `Completion`: set when the attempt ended the delivery. */
        readonly latencyMs?: number | null | undefined
      }
    | undefined
}

/**
 * What `claimDue` takes: pending deliveries with `dueAt <= now` whose lease is absent or expired
 * (`leaseUntil <= now`), oldest `dueAt` first (then in the order they were made), at most `limit`
 * in all and at most `maxPerWebhook` of any one webhook, or fewer for a webhook listed in
 * `roomByWebhook` (the dispatcher already holds some of its work; `0` leaves it out). Each
 * claimed delivery gets `leaseUntil` and `leaseToken`.
 * @since 0.1.0
 */
export interface ClaimRequest {
  readonly now: number
  readonly limit: number
  readonly maxPerWebhook: number
  /**
   * For flow-controlled webhooks (`FlowControl.isControlled`), which are claimed under their
   * rules instead: at most this many of one webhook (its attempts start at once, so the rate is
   * counted when they start), or its `roomByWebhook` if less. A disabled webhook's deliveries are
   * never claimed; default `maxPerWebhook`. A rate-limited one's no more than its window allows (`FlowControl.allowance`,
   * over every claimer); a FIFO one's only its earliest pending delivery (in the order they were
   * made), and only once it is due and no claimer holds it.
   */
  readonly maxInFlightPerWebhook?: number | undefined
  readonly roomByWebhook: ReadonlyMap<string, number>
  readonly leaseUntil: number
  readonly leaseToken: string
}

/**
 * A claimed delivery: everything one attempt needs. `attempts` counts the attempts recorded so
 * far; the next one is `attempts + 1`. `cycleStart` is how many of them came before its current
 * cycle (0, or the count at its last resend or replay), and `trigger` what started that cycle.
 * @since 0.1.0
 */
export interface ClaimedDelivery {
  readonly id: string
  readonly workspaceId: WorkspaceId
  readonly webhookId: string
  readonly eventId: string
  readonly eventType: string
  readonly body: string
  readonly attempts: number
  readonly cycleStart: number
  readonly trigger: Trigger
  readonly leaseToken: string
  readonly target: Target
  /** Its event's W3C `traceparent`: each attempt continues that trace with a span of its own. */
  readonly traceparent?: string | null | undefined
}

/**
 * What `resend` did: the delivery back to `pending` (with its log), or why not: no such
 * delivery of the webhook in the workspace, or one that is pending already.
 * @since 0.1.0
 */
export type ResendResult =
  | { readonly _tag: "Resent"; readonly delivery: DeliveryLog }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "Pending"; readonly held: boolean }

/**
 * Where a replay stands: the last delivery it looked at, by its event's time and the order
 * deliveries were made in.
 * @since 0.1.0
 */
export interface ReplayCursor {
  readonly eventCreatedAt: number
  readonly seq: number
}

/**
 * One step of a replay: of one webhook's deliveries that are not pending and whose event was
 * created in `[since, until)` (epoch seconds), the next at most `limit` after `after` in event
 * order are looked at, and those whose status is in `statuses` go back to `pending`, due at `now`
 * (epoch milliseconds), with a fresh manual cycle. A delivery that is pending already is left
 * alone, so concurrent replays never make one delivery due twice.
 * @since 0.1.0
 */
export interface ReplayRequest {
  readonly workspaceId: WorkspaceId
  readonly webhookId: string
  readonly since: number
  readonly until: number
  readonly statuses: ReadonlyArray<"failed" | "succeeded">
  readonly after: ReplayCursor | undefined
  readonly limit: number
  readonly now: number
}

/**
 * What one replay step did: how many deliveries went back to `pending`, and where the next
 * step starts (`undefined`: nothing more in the window).
 * @since 0.1.0
 */
export interface ReplayStep {
  readonly resent: number
  readonly next: ReplayCursor | undefined
}

/**
 * The result of one attempt: record `attempt`, then set `status` (`pending` with `retryAt` for
 * the one retry). Applies only while the delivery still holds `leaseToken`; the lease is
 * released.
 * @since 0.1.0
 */
export interface Completion {
  readonly deliveryId: string
  readonly leaseToken: string
  readonly attempt: Attempt
  readonly status: DeliveryStatus
  /** Epoch milliseconds, when `status` is `pending`; else `null`. */
  readonly retryAt: number | null
  /**
   * When the attempt ended the delivery (`succeeded` or `failed`): milliseconds from its event's
   * recording to the attempt's end, what the delivery statistics report. Absent or `null`:
   * unknown.
   */
  readonly latencyMs?: number | null | undefined
}

/**
 * @since 0.1.0
 */
export class DeliveryStore extends Context.Tag("@waybill/webhooks/DeliveryStore")<
  DeliveryStore,
  {
    readonly insert: (deliveries: ReadonlyArray<NewDelivery>) => Effect.Effect<void>
    readonly claimDue: (request: ClaimRequest) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
    /** Applies completions atomically; answers the ids whose lease still held. */
    readonly complete: (completions: ReadonlyArray<Completion>) => Effect.Effect<ReadonlyArray<string>>
    /** A webhook's deliveries with their attempts (oldest attempt first), newest delivery first. */
    readonly list: (
      workspaceId: WorkspaceId,
      webhookId: string,
      query: Page.Query
    ) => Effect.Effect<Page.Page<DeliveryLog>>
    /**
     * A webhook's URL or authentication changed (an edit in the console): attempts that start
     * from now on send to `target`, whatever target their delivery was made with. A store that
     * reads the target at claim time (by the webhook's id and revision) only updates what it
     * cached.
     */
    readonly retarget: (workspaceId: WorkspaceId, target: Target) => Effect.Effect<void>
    /**
     * An operator's resend: a delivery of the webhook that is not pending goes back to
     * `pending`, due at `now` (epoch milliseconds), unleased, with a fresh manual cycle; its
     * attempts so far stay in its log. One atomic step.
     */
    readonly resend: (
      workspaceId: WorkspaceId,
      webhookId: string,
      deliveryId: string,
      now: number
    ) => Effect.Effect<ResendResult>
    /**
     * The webhook was disabled (contract §8): its pending deliveries that are not in flight (no
     * lease, or one that ran out by `now`, epoch milliseconds) become `held`. One atomic step.
     */
    readonly hold: (workspaceId: WorkspaceId, webhookId: string, now: number) => Effect.Effect<void>
    /**
     * The webhook was enabled: its held deliveries go back to `pending`, due at `now`, unleased,
     * keeping their cycle (a held retry gets its retry). One atomic step, so a held delivery is
     * released once whoever else enables it.
     */
    readonly release: (workspaceId: WorkspaceId, webhookId: string, now: number) => Effect.Effect<void>
    /** One bounded step of a replay (one statement on PostgreSQL). */
    readonly replayStep: (request: ReplayRequest) => Effect.Effect<ReplayStep>
    /**
     * The statistics of a webhook's deliveries whose events were recorded in `window` (see
     * `DeliveryStats`), counted by the store in one read.
     */
    readonly stats: (workspaceId: WorkspaceId, webhookId: string, window: StatsWindow) => Effect.Effect<DeliveryStats>
    /** Removes a webhook's deliveries and attempts (the webhook is being deleted). */
    readonly deleteForWebhook: (workspaceId: WorkspaceId, webhookId: string) => Effect.Effect<void>
  }
>() {}

/**
 * A new delivery as a claim hands it out: its attempts so far, its retry cycle, the claim's
 * lease token and its webhook's current target.
 * @since 0.1.0
 */
export const claimedOf = (
  delivery: NewDelivery,
  claim: {
    readonly attempts: number
    readonly cycleStart: number
    readonly trigger: Trigger
    readonly leaseToken: string
    readonly target: Target
  }
): ClaimedDelivery => ({
  id: delivery.id,
  workspaceId: delivery.workspaceId,
  webhookId: delivery.webhookId,
  eventId: delivery.eventId,
  eventType: delivery.eventType,
  body: delivery.body,
  attempts: claim.attempts,
  cycleStart: claim.cycleStart,
  trigger: claim.trigger,
  leaseToken: claim.leaseToken,
  target: claim.target,
  traceparent: delivery.traceparent
})

/**
 * The status a new delivery without an outcome starts in: `held` when its webhook was disabled
 * as fan-out read it, else `pending`.
 * @since 0.1.0
 */
export const statusOf = (delivery: NewDelivery): "pending" | "held" =>
  delivery.target.status === "disabled" ? "held" : "pending"
