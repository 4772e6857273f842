/**
 * Flow control per webhook (contract §8), shared by the stores: the rate limit's schedule (why:
 * docs/webhooks.md, Flow control) and the failure count behind automatic disabling.
 * @since 0.1.0
 */
import type { Target } from "./Webhook.js"

/** Whether a webhook's deliveries take the flow-controlled claim: disabled, rate-limited or FIFO. @since 0.1.0 */
export const isControlled = (target: Pick<Target, "status" | "rateLimitPerSecond" | "ordering">): boolean =>
  target.status !== "enabled" || target.rateLimitPerSecond !== null || target.ordering !== "none"

/**
 * The share of the limit a busy webhook is scheduled at: attempts start `interval(limit)` apart,
 * so arrivals delayed by up to `1000 / margin - 1000` ms (52 ms) more than the attempt before
 * them still put no more than the limit into any one second (docs/decisions/0115).
 * @since 0.3.0
 */
export const margin = 0.95

/**
 * The most an attempt may start after the last slot it holds, in milliseconds: less than the
 * margin's `1000 / margin - 1000` (52 ms), so starts each within it of their slots put no more than
 * the limit into any one second. One woken later (a busy host) gives its claim back; given back
 * again, its claims hold more slots (`slotsFor`), so a host too busy for one slot still delivers.
 * @since 0.3.0
 */
export const lateStartMs = 50

/**
 * The latest a claimed attempt may start, in epoch milliseconds: its `startBy`, or, from a store
 * that gives only `notBefore`, `lateStartMs` after it; `undefined` when it has no slot.
 * @since 0.3.0
 */
export const latestStart = (claimed: {
  readonly notBefore?: number | undefined
  readonly startBy?: number | undefined
}): number | undefined =>
  claimed.notBefore === undefined ? undefined : (claimed.startBy ?? claimed.notBefore + lateStartMs)

/**
 * How late an attempt given back again and again may at least start, in milliseconds: the slots
 * it holds (`slotsFor`) stop doubling once they reach this far.
 * @since 0.3.0
 */
export const mostLateMs = 1_000

/**
 * How many consecutive slots the attempt of a delivery given back `missed` times for starting
 * late holds: one, and one again after a first give-back (a passing stall costs its webhook one
 * slot, not two), then twice as many each time, until they let it start `mostLateMs` late.
 * Holding `n` slots, it may start up to `n - 1` intervals (and `lateStartMs`) after the first, and
 * still no second gets more than the limit: the next attempt's slot comes after all of them. An
 * invalid limit: one.
 * @since 0.3.0
 */
export const slotsFor = (missed: number, limit: number): number => {
  const step = interval(limit)
  if (!(missed > 1 && step > 0 && Number.isFinite(step))) return 1
  return Math.min(1 + Math.ceil((mostLateMs - lateStartMs) / step), 2 ** Math.min(missed - 1, 30))
}

/**
 * How far ahead of its claim `run` schedules a rate-limited webhook's attempts, in milliseconds
 * (from half of it on, see `schedule`): a claim up to half of it late still finds its slot.
 * @since 0.3.0
 */
export const horizonMs = 200

/** The time between two attempts scheduled under `limit` per second, in milliseconds. @since 0.3.0 */
export const interval = (limit: number): number => 1000 / (limit * margin)

/** A claim's schedule: when each claimed attempt may start (epoch ms, in claim order), and the webhook's next slot. @since 0.3.0 */
export interface Schedule {
  readonly notBefore: ReadonlyArray<number>
  readonly nextAt: number
}

// The first slot a claim at `now` may give: at least a slot (at most half the horizon) ahead.
const firstSlot = (nextAt: number, now: number, horizon: number): number =>
  Math.max(now + Math.min(horizon / 2, slotMs), Number.isFinite(nextAt) ? nextAt : 0)

/**
 * The schedule of a claim at `now` (virtual scheduling): up to `room` attempts, one every
 * `interval(limit)` from the webhook's next slot `nextAt`, only those starting within `horizon` ms
 * of `now`. None starts sooner than a slot (`slotMs`, at most half the horizon) after `now`, so the claim's own time (its
 * transaction, the start of its runner) never makes its first attempt late against the ones
 * after it. Invalid numbers schedule nothing.
 * @since 0.3.0
 */
export const schedule = (nextAt: number, now: number, limit: number, room: number, horizon: number): Schedule => {
  const step = interval(limit)
  const notBefore: Array<number> = []
  if (!(step > 0 && Number.isFinite(step) && Number.isFinite(now))) return { notBefore, nextAt }
  const first = firstSlot(nextAt, now, horizon)
  for (let i = 0; i < room; i++) {
    const at = first + i * step
    if (!(at <= now + horizon)) break
    notBefore.push(at)
  }
  return { notBefore, nextAt: notBefore.length === 0 ? nextAt : first + notBefore.length * step }
}

/**
 * Where a claim's attempts go once taken: as `schedule` counted them, each holding `slots[i]`
 * consecutive slots (`slotsFor`), so one may start later than the one slot `schedule` gave it. Its
 * `startBy` is the latest it may start (`lateStartMs` after its last slot); then the webhook's next
 * slot. The first attempt's slot is `schedule`'s; the later ones may lie beyond the horizon.
 * @since 0.3.0
 */
export interface Placement extends Schedule {
  readonly startBy: ReadonlyArray<number>
}

/** The placement of the attempts a claim at `now` took, holding `slots` slots each (see `Placement`). @since 0.3.0 */
export const place = (
  nextAt: number,
  now: number,
  limit: number,
  horizon: number,
  slots: ReadonlyArray<number>
): Placement => {
  const step = interval(limit)
  const notBefore: Array<number> = []
  const startBy: Array<number> = []
  if (!(step > 0 && Number.isFinite(step) && Number.isFinite(now))) return { notBefore, startBy, nextAt }
  let at = firstSlot(nextAt, now, horizon)
  for (const held of slots) {
    const n = Math.max(1, Math.floor(held))
    notBefore.push(at)
    startBy.push(at + (n - 1) * step + lateStartMs)
    at += n * step
  }
  return { notBefore, startBy, nextAt: slots.length === 0 ? nextAt : at }
}

/**
 * When a loop that claimed attempts of a webhook, the last of them to start by `startBy`, claims
 * again: once the slot after its last one is inside the horizon, and not before `slotMs` from `now`.
 * @since 0.3.0
 */
export const nextClaimAt = (startBy: number, limit: number, now: number): number =>
  // One millisecond more, so the claim's `now + horizonMs` is past the slot whatever the rounding.
  Math.max(now + slotMs, Math.ceil(startBy - lateStartMs + interval(limit) - horizonMs) + 1)

/**
 * The length of a slot of the previous release's rate window, in milliseconds (and the least
 * time between a loop's claims of a rate-limited webhook).
 * @since 0.1.0
 */
export const slotMs = 50

/** How many slots the previous release's window counts: the current one and those before it. @since 0.1.0 */
export const slotsCounted = 31

/**
 * The previous release's rate window of a webhook: its newest slot's number and the attempts
 * claimed per slot, newest first. Kept current, so processes of that release still running during
 * a rolling deploy count this release's attempts.
 * @since 0.1.0
 */
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
