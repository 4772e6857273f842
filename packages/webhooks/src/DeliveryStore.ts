/**
 * The storage port for deliveries and their attempts: fan-out inserts them, dispatchers claim due
 * ones under a lease and complete what they claimed, only while their lease holds. Times are epoch
 * milliseconds from the dispatcher's `Clock`; storage failures are defects. Details:
 * docs/internals.md (DeliveryStore).
 * @since 0.1.0
 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Attempt, DeliveryLog, DeliveryStatus, Trigger } from "./Delivery.js"
import { type DeliveryStats, type StatsWindow, summarize } from "./DeliveryStats.js"
import * as FlowControl from "./FlowControl.js"
import * as Page from "./Page.js"
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

interface Row {
  readonly delivery: NewDelivery
  /** The order rows were made in. */
  readonly seq: number
  status: DeliveryStatus
  cycleStart: number
  trigger: Trigger
  dueAt: number
  attempts: Array<Attempt>
  latencyMs: number | null
  leaseUntil: number | null
  leaseToken: string | null
}

// The later of two targets of one webhook, by revision.
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

const newer = (a: Target | undefined, b: Target): Target => (a !== undefined && a.revision > b.revision ? a : b)

/**
 * An in-memory store. `claimDue` and `complete` run synchronously, so they are atomic with
 * respect to every other fiber, as the row locks make them on PostgreSQL.
 * @since 0.1.0
 */
export const makeMemory = (): DeliveryStore["Type"] => {
  const rows = new Map<string, Row>()
  // Per webhook, its rows in insertion order (the order they became due in, except for
  // retries) from the first one still pending: claims scan from there, without sorting.
  const lanes = new Map<string, { rows: Array<Row>; head: number }>()
  // Per webhook, the target of its latest edit: it replaces what older deliveries were made with.
  const retargeted = new Map<string, Target>()
  // Per rate-limited webhook, the attempts its claims started.
  const windows = new Map<string, FlowControl.RateWindow>()
  let made = 0
  const enqueue = (row: Row) => {
    let lane = lanes.get(row.delivery.webhookId)
    if (lane === undefined) {
      lane = { rows: [], head: 0 }
      lanes.set(row.delivery.webhookId, lane)
    }
    lane.rows.push(row)
  }
  // Back to pending with a fresh manual cycle. The row joins its lane's end again (a copy left
  // behind the head is skipped, one ahead of it is claimed once: the claim leases it).
  const restart = (row: Row, now: number) => {
    row.status = "pending"
    row.dueAt = now
    row.cycleStart = row.attempts.length
    row.trigger = "manual"
    row.leaseUntil = null
    row.leaseToken = null
    enqueue(row)
  }
  const logOf = (row: Row): DeliveryLog => ({
    id: row.delivery.id,
    eventId: row.delivery.eventId,
    eventType: row.delivery.eventType,
    status: row.status,
    attempts: [...row.attempts]
  })
  return DeliveryStore.of({
    insert: (deliveries) =>
      Effect.sync(() => {
        for (const delivery of deliveries) {
          if (rows.has(delivery.id)) continue
          const row: Row = {
            delivery,
            seq: made++,
            status: delivery.outcome?.status ?? statusOf(delivery),
            cycleStart: 0,
            trigger: "automatic",
            dueAt: delivery.dueAt,
            attempts: delivery.outcome === undefined ? [] : [delivery.outcome.attempt],
            latencyMs: delivery.outcome?.latencyMs ?? null,
            leaseUntil: delivery.lease?.until ?? null,
            leaseToken: delivery.lease?.token ?? null
          }
          rows.set(delivery.id, row)
          enqueue(row)
        }
      }),
    claimDue: (request) =>
      Effect.sync(() => {
        const claimed: Array<ClaimedDelivery> = []
        for (const [webhookId, lane] of lanes) {
          if (claimed.length >= request.limit) break
          const room = request.roomByWebhook.get(webhookId) ?? request.maxPerWebhook
          if (room <= 0) continue
          while (lane.head < lane.rows.length && lane.rows[lane.head]!.status !== "pending") lane.head++
          if (lane.head === lane.rows.length) {
            lanes.delete(webhookId)
            continue
          }
          if (lane.head > 1024 && lane.head * 2 > lane.rows.length) {
            lane.rows = lane.rows.slice(lane.head)
            lane.head = 0
          }
          // The webhook as last changed: flow control by its rules (see `ClaimRequest`).
          const current = newer(retargeted.get(webhookId), lane.rows[lane.rows.length - 1]!.delivery.target)
          let allowed = room
          let order: ReadonlyArray<Row> = lane.rows
          let from = lane.head
          if (FlowControl.isControlled(current)) {
            if (current.status !== "enabled") continue
            allowed = Math.min(room, request.maxInFlightPerWebhook ?? request.maxPerWebhook)
            if (current.rateLimitPerSecond !== null) {
              allowed = Math.min(
                allowed,
                FlowControl.allowance(
                  windows.get(webhookId) ?? FlowControl.emptyWindow,
                  request.now,
                  current.rateLimitPerSecond
                )
              )
            }
            if (current.ordering === "fifo") {
              // Only the earliest pending delivery, in the order they were made.
              let first: Row | undefined
              for (let i = lane.head; i < lane.rows.length; i++) {
                const row = lane.rows[i]!
                if (row.status === "pending" && (first === undefined || row.seq < first.seq)) first = row
              }
              order = first === undefined ? [] : [first]
              from = 0
              allowed = Math.min(allowed, 1)
            }
          }
          let taken = 0
          for (let i = from; i < order.length; i++) {
            if (claimed.length >= request.limit || taken >= allowed) break
            const row = order[i]!
            if (
              row.status !== "pending" ||
              row.dueAt > request.now ||
              (row.leaseUntil !== null && row.leaseUntil > request.now)
            ) {
              continue
            }
            taken++
            row.leaseUntil = request.leaseUntil
            row.leaseToken = request.leaseToken
            const { delivery } = row
            claimed.push(
              claimedOf(delivery, {
                attempts: row.attempts.length,
                cycleStart: row.cycleStart,
                trigger: row.trigger,
                leaseToken: request.leaseToken,
                target: newer(retargeted.get(webhookId), delivery.target)
              })
            )
          }
          if (taken > 0 && current.rateLimitPerSecond !== null) {
            windows.set(
              webhookId,
              FlowControl.record(windows.get(webhookId) ?? FlowControl.emptyWindow, request.now, taken)
            )
          }
        }
        return claimed
      }),
    complete: (completions) =>
      Effect.sync(() => {
        const applied: Array<string> = []
        for (const completion of completions) {
          const row = rows.get(completion.deliveryId)
          if (row === undefined || row.status !== "pending" || row.leaseToken !== completion.leaseToken) continue
          row.attempts.push(completion.attempt)
          row.status = completion.status
          row.latencyMs = completion.latencyMs ?? null
          row.leaseUntil = null
          row.leaseToken = null
          if (completion.status === "pending") row.dueAt = completion.retryAt ?? row.dueAt
          applied.push(completion.deliveryId)
        }
        return applied
      }),
    list: (workspaceId, webhookId, query) =>
      Effect.sync(() => {
        const found = Array.from(rows.values())
          .filter(
            (row) =>
              row.delivery.workspaceId === workspaceId &&
              row.delivery.webhookId === webhookId &&
              (query.after === undefined || row.delivery.id < query.after)
          )
          .sort((a, b) => (a.delivery.id < b.delivery.id ? 1 : a.delivery.id > b.delivery.id ? -1 : 0))
          .slice(0, query.limit + 1)
          .map(logOf)
        return Page.make("dlv", found, query.limit, (log) => log.id)
      }),
    resend: (workspaceId, webhookId, deliveryId, now) =>
      Effect.sync((): ResendResult => {
        const row = rows.get(deliveryId)
        if (row === undefined || row.delivery.workspaceId !== workspaceId || row.delivery.webhookId !== webhookId) {
          return { _tag: "NotFound" }
        }
        if (row.status === "pending" || row.status === "held") return { _tag: "Pending", held: row.status === "held" }
        restart(row, now)
        return { _tag: "Resent", delivery: logOf(row) }
      }),
    replayStep: (request) =>
      Effect.sync((): ReplayStep => {
        const after = request.after
        const window = Array.from(rows.values())
          .filter(
            (row) =>
              row.delivery.workspaceId === request.workspaceId &&
              row.delivery.webhookId === request.webhookId &&
              row.status !== "pending" &&
              row.delivery.eventCreatedAt >= request.since &&
              row.delivery.eventCreatedAt < request.until &&
              (after === undefined ||
                row.delivery.eventCreatedAt > after.eventCreatedAt ||
                (row.delivery.eventCreatedAt === after.eventCreatedAt && row.seq > after.seq))
          )
          .sort((a, b) => a.delivery.eventCreatedAt - b.delivery.eventCreatedAt || a.seq - b.seq)
          .slice(0, request.limit)
        let resent = 0
        for (const row of window) {
          if (row.status === "pending" || row.status === "held" || !request.statuses.includes(row.status)) continue
          restart(row, request.now)
          resent++
        }
        const last = window.at(-1)
        return {
          resent,
          next:
            window.length < request.limit || last === undefined
              ? undefined
              : { eventCreatedAt: last.delivery.eventCreatedAt, seq: last.seq }
        }
      }),
    hold: (workspaceId, webhookId, now) =>
      Effect.sync(() => {
        for (const row of lanes.get(webhookId)?.rows ?? []) {
          if (
            row.delivery.workspaceId === workspaceId &&
            row.status === "pending" &&
            (row.leaseUntil === null || row.leaseUntil <= now)
          ) {
            row.status = "held"
            row.leaseUntil = null
            row.leaseToken = null
          }
        }
      }),
    release: (workspaceId, webhookId, now) =>
      Effect.sync(() => {
        const held = Array.from(rows.values())
          .filter(
            (row) =>
              row.delivery.workspaceId === workspaceId && row.delivery.webhookId === webhookId && row.status === "held"
          )
          .sort((a, b) => a.seq - b.seq)
        for (const row of held) {
          row.status = "pending"
          row.dueAt = now
          enqueue(row)
        }
      }),
    stats: (workspaceId, webhookId, window) =>
      Effect.sync(() =>
        summarize(
          window,
          Array.from(rows.values())
            .filter((row) => row.delivery.workspaceId === workspaceId && row.delivery.webhookId === webhookId)
            .map((row) => ({
              eventCreatedAt: row.delivery.eventCreatedAt,
              status: row.status,
              latencyMs: row.latencyMs
            }))
        )
      ),
    retarget: (_workspaceId, target) =>
      Effect.sync(() => {
        retargeted.set(target.webhookId, newer(retargeted.get(target.webhookId), target))
      }),
    deleteForWebhook: (workspaceId, webhookId) =>
      Effect.sync(() => {
        retargeted.delete(webhookId)
        windows.delete(webhookId)
        for (const [id, row] of rows) {
          if (row.delivery.workspaceId === workspaceId && row.delivery.webhookId === webhookId) {
            rows.delete(id)
          }
        }
        const lane = lanes.get(webhookId)
        if (lane !== undefined) {
          lane.rows = lane.rows.filter((row) => row.delivery.workspaceId !== workspaceId)
          lane.head = 0
        }
      })
  })
}

/**
 * An in-memory layer, for tests and embedders without storage.
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<DeliveryStore> = Layer.sync(DeliveryStore, makeMemory)
