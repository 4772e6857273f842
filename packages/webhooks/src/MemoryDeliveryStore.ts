/**
 * The `DeliveryStore` port in memory, for tests and embedders without storage: everything in one
 * process, lost when it ends.
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Attempt, DeliveryLog, DeliveryStatus, Trigger } from "./Delivery.js"
import { summarize } from "./DeliveryStats.js"
import {
  type ClaimedDelivery,
  claimedOf,
  DeliveryStore,
  type HeldClaim,
  type HeldDeliveries,
  type NewDelivery,
  type ReplayStep,
  type ResendResult,
  statusOf
} from "./DeliveryStore.js"
import * as FlowControl from "./FlowControl.js"
import * as Page from "./Page.js"
import type { Target } from "./Webhook.js"

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
  abandoned: number
  /** Claims given back since its last record for starting late (`FlowControl.slotsFor`). */
  missedSlots: number
}

// The later of two targets of one webhook, by revision.
const newer = (a: Target | undefined, b: Target): Target => (a !== undefined && a.revision > b.revision ? a : b)

/**
 * An in-memory store. `claimDue` and `complete` run synchronously, so they are atomic with
 * respect to every other fiber, as the row locks make them on PostgreSQL.
 * @since 0.2.0
 */
export const make = (): DeliveryStore["Type"] => {
  const rows = new Map<string, Row>()
  // Per webhook, its rows in insertion order (the order they became due in, except for
  // retries) from the first one still pending: claims scan from there, without sorting.
  const lanes = new Map<string, { rows: Array<Row>; head: number }>()
  // Per webhook, the target of its latest edit: it replaces what older deliveries were made with.
  const retargeted = new Map<string, Target>()
  // Per rate-limited webhook, its next slot (`FlowControl.schedule`).
  const nextSlots = new Map<string, number>()
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
  const heldRow = (claim: HeldClaim): Row | undefined => {
    const row = rows.get(claim.deliveryId)
    return row?.status === "pending" && row.leaseToken === claim.leaseToken ? row : undefined
  }
  const logOf = (row: Row): DeliveryLog => ({
    id: row.delivery.id,
    eventId: row.delivery.eventId,
    eventType: row.delivery.eventType,
    status: row.status,
    orderingKey: row.delivery.orderingKey ?? null,
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
            leaseToken: delivery.lease?.token ?? null,
            abandoned: delivery.abandoned ?? 0,
            missedSlots: 0
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
          const limit = current.rateLimitPerSecond
          const horizon = request.horizonMs ?? 0
          if (FlowControl.isControlled(current)) {
            if (current.status !== "enabled") continue
            allowed = Math.min(room, request.maxInFlightPerWebhook ?? request.maxPerWebhook)
            if (limit !== null) {
              allowed = FlowControl.schedule(nextSlots.get(webhookId) ?? 0, request.now, limit, allowed, horizon)
                .notBefore.length
            }
            if (current.ordering !== "none") {
              // Per key only its earliest pending delivery, in the order they were made (FIFO: one
              // key for all); those without a key as they come.
              const keyOf = (row: Row) => (current.ordering === "fifo" ? "" : (row.delivery.orderingKey ?? null))
              const firsts = new Map<string, Row>()
              const open: Array<Row> = []
              for (let i = lane.head; i < lane.rows.length; i++) {
                const row = lane.rows[i]!
                if (row.status !== "pending") continue
                const key = keyOf(row)
                if (key === null) open.push(row)
                else if ((firsts.get(key)?.seq ?? Number.POSITIVE_INFINITY) > row.seq) firsts.set(key, row)
              }
              order = [...new Set([...open, ...firsts.values()])].sort((a, b) => a.seq - b.seq)
              from = 0
            }
          }
          const first = claimed.length
          const held: Array<number> = []
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
            if (limit !== null) held.push(FlowControl.slotsFor(row.missedSlots, limit))
            row.leaseUntil = request.leaseUntil
            row.leaseToken = request.leaseToken
            const { delivery } = row
            claimed.push(
              claimedOf(delivery, {
                attempts: row.attempts.length,
                cycleStart: row.cycleStart,
                trigger: row.trigger,
                leaseToken: request.leaseToken,
                target: newer(retargeted.get(webhookId), delivery.target),
                abandoned: row.abandoned
              })
            )
          }
          if (taken > 0 && limit !== null) {
            // The slots of those taken, in the order they were taken.
            const slots = FlowControl.place(nextSlots.get(webhookId) ?? 0, request.now, limit, horizon, held)
            nextSlots.set(webhookId, slots.nextAt)
            for (let i = 0; i < taken; i++) {
              claimed[first + i] = {
                ...claimed[first + i]!,
                notBefore: slots.notBefore[i]!,
                startBy: slots.startBy[i]!
              }
            }
          }
        }
        return claimed
      }),
    renew: (claims, leaseUntil) =>
      Effect.sync(() => {
        const renewed: Array<string> = []
        for (const claim of claims) {
          const row = heldRow(claim)
          if (row === undefined) continue
          row.leaseUntil = leaseUntil
          renewed.push(claim.deliveryId)
        }
        return renewed
      }),
    releaseClaims: (claims) =>
      Effect.sync(() => {
        let released = 0
        for (const claim of claims) {
          const row = heldRow(claim)
          if (row === undefined) continue
          row.leaseUntil = null
          row.leaseToken = null
          if (claim.abandoned) row.abandoned++
          if (claim.missedSlot === true) row.missedSlots++
          released++
        }
        return released
      }),
    complete: (completions) =>
      Effect.sync(() => {
        const applied: Array<string> = []
        for (const completion of completions) {
          const row = rows.get(completion.deliveryId)
          if (row === undefined || row.status !== "pending" || row.leaseToken !== completion.leaseToken) continue
          row.attempts.push(completion.attempt)
          row.missedSlots = 0
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
    held: (workspaceId, webhookIds) =>
      Effect.sync(() => {
        const wanted = new Set(webhookIds)
        const held = new Map<string, HeldDeliveries>()
        if (wanted.size === 0) return held
        for (const { delivery, status } of rows.values()) {
          if (status !== "held" || delivery.workspaceId !== workspaceId || !wanted.has(delivery.webhookId)) continue
          const known = held.get(delivery.webhookId)
          held.set(
            delivery.webhookId,
            known === undefined
              ? { count: 1, oldestId: delivery.id }
              : { count: known.count + 1, oldestId: delivery.id < known.oldestId ? delivery.id : known.oldestId }
          )
        }
        return held
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
        nextSlots.delete(webhookId)
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

/** An in-memory layer, for tests and embedders without storage. @since 0.2.0 */
export const layer: Layer.Layer<DeliveryStore> = Layer.sync(DeliveryStore, make)
