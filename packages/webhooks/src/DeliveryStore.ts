/**
 * The storage port for deliveries: fan-out inserts them, dispatchers claim due ones under a lease
 * and complete them while it holds. Times are epoch milliseconds from the dispatcher's `Clock`;
 * storage failures are defects. Details: docs/internals.md (DeliveryStore).
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
 * A delivery made at fan-out; a store keeps the first row for an id and ignores a second (the
 * same event fanned out again after a crash). One made while its webhook is disabled is stored
 * `held` (`statusOf`).
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
  /** Its event's W3C `traceparent`; absent for an event without one. */
  readonly traceparent?: string | null | undefined
  /**
   * Its event's ordering key: a webhook with `"ordering": "key"` makes the deliveries of one key
   * one at a time, in event order. Absent or `null` without one.
   * @since 0.3.0
   */
  readonly orderingKey?: string | null | undefined
  /** Set when the dispatcher that fans out delivers it itself: it is claimed as it is made. */
  readonly lease?: { readonly until: number; readonly token: string } | undefined
  /** Attempts started and cut short by a stop before it was recorded (see `ReleasedClaim`). */
  readonly abandoned?: number | undefined
  /** Set when its first attempt ended before the delivery was recorded (`pending`: `dueAt` is the retry). */
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
 * What `claimDue` takes: due, unleased (or lease expired) pending deliveries, oldest `dueAt` first,
 * at most `limit` in all and `maxPerWebhook` (or its `roomByWebhook`, `0` leaving it out) of one
 * webhook; each claimed one gets `leaseUntil` and `leaseToken`.
 * @since 0.1.0
 */
export interface ClaimRequest {
  readonly now: number
  readonly limit: number
  readonly maxPerWebhook: number
  /**
   * For flow-controlled webhooks (`FlowControl.isControlled`): at most this many of one (default
   * `maxPerWebhook`), never a disabled one's, a rate-limited one's as `FlowControl.schedule` places
   * them over every claimer, a FIFO one's only its earliest pending delivery while no claimer holds one.
   */
  readonly maxInFlightPerWebhook?: number | undefined
  /**
   * How far ahead of `now` a rate-limited webhook's claimed attempts may be scheduled (each
   * claimed one's `notBefore`), in milliseconds. Default 0: only attempts that may start now.
   * @since 0.3.0
   */
  readonly horizonMs?: number | undefined
  readonly roomByWebhook: ReadonlyMap<string, number>
  readonly leaseUntil: number
  readonly leaseToken: string
}

/**
 * A claimed delivery: everything one attempt needs. `attempts` counts those recorded so far,
 * `cycleStart` those before its current cycle, and `trigger` says what started that cycle;
 * `abandoned` counts attempts a stop cut short, so the next one's number (`attemptNumber`) is new.
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
  readonly abandoned?: number | undefined
  /**
   * Epoch milliseconds before which its attempt must not start: its slot under its webhook's rate
   * limit (`FlowControl.schedule`). Absent: at once.
   * @since 0.3.0
   */
  readonly notBefore?: number | undefined
  /**
   * With `notBefore`, epoch milliseconds after which its attempt must not start (it gives its
   * claim back instead, `missedSlot`): the end of the slots it holds (`FlowControl.place`).
   * @since 0.3.0
   */
  readonly startBy?: number | undefined
}

/**
 * The number the next attempt of a claimed delivery carries (`X-Delivery-Attempt`): every attempt
 * started before it counts, recorded or cut short by a stop, so a number is never sent twice.
 * @since 0.3.0
 */
export const attemptNumber = (claimed: ClaimedDelivery): number => claimed.attempts + (claimed.abandoned ?? 0) + 1

/** A claim a dispatcher holds: renewed while it works on it, given back when it stops. @since 0.3.0 */
export interface HeldClaim {
  readonly deliveryId: string
  readonly leaseToken: string
}

/**
 * A claim given back, so another dispatcher takes the delivery at once instead of after the lease:
 * `abandoned` when its attempt had started and was cut short at a stop (counted, see
 * `attemptNumber`); `missedSlot` when its attempt woke after its `startBy` and never started
 * (counted, so its next claim holds more slots: `FlowControl.slotsFor`, until its next record).
 * @since 0.3.0
 */
export interface ReleasedClaim extends HeldClaim {
  readonly abandoned: boolean
  readonly missedSlot?: boolean | undefined
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
 * One step of a replay: the next `limit` ended deliveries after `after` whose events fall in
 * `[since, until)` (epoch seconds); those with a status in `statuses` go back to `pending`, due at
 * `now`, with a fresh manual cycle. A pending one is left alone, so none is made due twice.
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
 * The deliveries a disabled webhook holds: how many, and the id of the oldest, which carries its
 * event's time (when the retention expires it: `Webhook.heldExpiresAt`).
 * @since 0.3.0
 */
export interface HeldDeliveries {
  readonly count: number
  readonly oldestId: string
}

/**
 * The result of one attempt: `attempt` recorded and `status` set (`pending` with `retryAt` for
 * the retry), only while the delivery still holds `leaseToken`; the lease is released.
 * @since 0.1.0
 */
export interface Completion {
  readonly deliveryId: string
  readonly leaseToken: string
  readonly attempt: Attempt
  readonly status: DeliveryStatus
  /** Epoch milliseconds, when `status` is `pending`; else `null`. */
  readonly retryAt: number | null
  /** When the attempt ended the delivery: milliseconds from its event's recording to the end; `null`: unknown. */
  readonly latencyMs?: number | null | undefined
}

/** The storage port for deliveries and their attempts. @since 0.1.0 */
export class DeliveryStore extends Context.Tag("@waybill/webhooks/DeliveryStore")<
  DeliveryStore,
  {
    readonly insert: (deliveries: ReadonlyArray<NewDelivery>) => Effect.Effect<void>
    readonly claimDue: (request: ClaimRequest) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
    /** Moves the lease of each claim still held (pending, same token) to `leaseUntil`; answers their ids. */
    readonly renew: (claims: ReadonlyArray<HeldClaim>, leaseUntil: number) => Effect.Effect<ReadonlyArray<string>>
    /** Unleases each claim still held (pending, same token), counting abandoned attempts; answers how many. */
    readonly releaseClaims: (claims: ReadonlyArray<ReleasedClaim>) => Effect.Effect<number>
    /** Applies completions atomically; answers the ids whose lease still held. */
    readonly complete: (completions: ReadonlyArray<Completion>) => Effect.Effect<ReadonlyArray<string>>
    /** A webhook's deliveries with their attempts (oldest attempt first), newest delivery first. */
    readonly list: (
      workspaceId: WorkspaceId,
      webhookId: string,
      query: Page.Query
    ) => Effect.Effect<Page.Page<DeliveryLog>>
    /**
     * A webhook's URL or authentication changed: attempts that start from now on send to
     * `target`, whatever their delivery was made with.
     */
    readonly retarget: (workspaceId: WorkspaceId, target: Target) => Effect.Effect<void>
    /**
     * An operator's resend: an ended delivery goes back to `pending`, due at `now`, unleased,
     * with a fresh manual cycle, its attempts kept. One atomic step.
     */
    readonly resend: (
      workspaceId: WorkspaceId,
      webhookId: string,
      deliveryId: string,
      now: number
    ) => Effect.Effect<ResendResult>
    /** The webhook was disabled: its pending deliveries not in flight by `now` become `held`. One atomic step. */
    readonly hold: (workspaceId: WorkspaceId, webhookId: string, now: number) => Effect.Effect<void>
    /**
     * The webhook was enabled: its held deliveries go back to `pending`, due at `now`, unleased,
     * keeping their cycle. One atomic step, so each is released once.
     */
    readonly release: (workspaceId: WorkspaceId, webhookId: string, now: number) => Effect.Effect<void>
    /**
     * For each of these webhooks of the workspace that holds deliveries, how many it holds and the
     * id of the oldest (ids sort by their event's time, which they carry): one read for a page of
     * webhooks (one statement on PostgreSQL); webhooks holding none are absent.
     * @since 0.3.0
     */
    readonly held: (
      workspaceId: WorkspaceId,
      webhookIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, HeldDeliveries>>
    /** One bounded step of a replay (one statement on PostgreSQL). */
    readonly replayStep: (request: ReplayRequest) => Effect.Effect<ReplayStep>
    /** The statistics of a webhook's deliveries whose events were recorded in `window`, in one read. */
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
    readonly abandoned?: number | undefined
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
  traceparent: delivery.traceparent,
  abandoned: claim.abandoned ?? delivery.abandoned ?? 0
})

/**
 * The status a new delivery without an outcome starts in: `held` when its webhook was disabled
 * as fan-out read it, else `pending`.
 * @since 0.1.0
 */
export const statusOf = (delivery: NewDelivery): "pending" | "held" =>
  delivery.target.status === "disabled" ? "held" : "pending"
