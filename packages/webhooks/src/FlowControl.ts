/**
 * Flow control per webhook (contract §8), shared by the stores: the rate window (why 31 slots of
 * 50 ms: docs/webhooks.md, Flow control) and the failure count behind automatic disabling.
 * @since 0.1.0
 */
import type { Target } from "./Webhook.js"

/** Whether a webhook's deliveries take the flow-controlled claim: disabled, rate-limited or FIFO. @since 0.1.0 */
export const isControlled = (target: Pick<Target, "status" | "rateLimitPerSecond" | "ordering">): boolean =>
  target.status !== "enabled" || target.rateLimitPerSecond !== null || target.ordering !== "none"

/** The length of a rate window's slot, in milliseconds. @since 0.1.0 */
export const slotMs = 50

/** How many slots a claim counts: the current one and those before it. @since 0.1.0 */
export const slotsCounted = 31

/** A webhook's rate window: its newest slot's number and the attempts started per slot, newest first. @since 0.1.0 */
export interface RateWindow {
  readonly slot: number
  readonly counts: ReadonlyArray<number>
}

/** An empty window. @since 0.1.0 */
export const emptyWindow: RateWindow = { slot: 0, counts: [] }

const shift = (window: RateWindow, now: number): Array<number> => {
  const slot = Math.floor(now / slotMs)
  const gap = slot - window.slot
  if (gap < 0) return [...window.counts]
  if (gap >= slotsCounted) return []
  return [...Array.from({ length: gap }, () => 0), ...window.counts].slice(0, slotsCounted)
}

/** How many attempts a claim at `now` (epoch ms) may start under `limit` per second. @since 0.1.0 */
export const allowance = (window: RateWindow, now: number, limit: number): number => {
  const counts = shift(window, now)
  const inWindow = counts.reduce((sum, count) => sum + count, 0)
  return Math.max(0, Math.min(limit - inWindow, perSlot(limit) - (counts[0] ?? 0)))
}

/** The most attempts one slot may start: the limit's share of a slot, at least one. @since 0.1.0 */
export const perSlot = (limit: number): number => Math.max(1, Math.ceil((limit * slotMs) / 1000))

/** The window after a claim at `now` started `started` attempts. @since 0.1.0 */
export const record = (window: RateWindow, now: number, started: number): RateWindow => {
  const slot = Math.floor(now / slotMs)
  const counts = shift(window, now)
  if (slot < window.slot) {
    // A clock behind the window's (another process): counted in the newest slot.
    counts[0] = (counts[0] ?? 0) + started
    return { slot: window.slot, counts }
  }
  if (counts.length === 0) counts.push(0)
  counts[0] = counts[0]! + started
  return { slot, counts }
}

/**
 * One webhook's endings in a batch: whether one succeeded (the count restarts), and the failures after.
 * @since 0.1.0
 */
export interface Endings {
  readonly workspaceId: string
  readonly webhookId: string
  readonly reset: boolean
  readonly failures: number
}

/** The endings of a batch per webhook, from final statuses in the order they ended. @since 0.1.0 */
export const endingsOf = (
  ended: ReadonlyArray<{ readonly workspaceId: string; readonly webhookId: string; readonly status: string }>
): Array<Endings> => {
  const byWebhook = new Map<string, { workspaceId: string; webhookId: string; reset: boolean; failures: number }>()
  for (const item of ended) {
    if (item.status !== "succeeded" && item.status !== "failed") continue
    const key = `${item.workspaceId}\u0000${item.webhookId}`
    let entry = byWebhook.get(key)
    if (entry === undefined) {
      entry = { workspaceId: item.workspaceId, webhookId: item.webhookId, reset: false, failures: 0 }
      byWebhook.set(key, entry)
    }
    if (item.status === "succeeded") {
      entry.reset = true
      entry.failures = 0
    } else entry.failures++
  }
  return [...byWebhook.values()]
}

/** A webhook's count of failures in a row after `endings` are added to `streak`. @since 0.1.0 */
export const nextStreak = (streak: number, endings: Pick<Endings, "reset" | "failures">): number =>
  endings.reset ? endings.failures : streak + endings.failures
