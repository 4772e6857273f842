/**
 * What the delivery engine's state is: a loop's claims, lanes, runners and results, `run`'s
 * fan-out and its batches, and how each starts. Only `engine.ts` changes it (see there).
 */
import type * as Effect from "effect/Effect"
import type { ClaimedDelivery, NewDelivery } from "../DeliveryStore.js"
import * as FlowControl from "../FlowControl.js"
import type { Outcome } from "./attempts.js"
import * as Lanes from "./lanes.js"
import type { Settings } from "./settings.js"
import * as Signal from "./signal.js"

/** Attempts made by a loop, and how they ended. */
export interface Tally {
  attempts: number
  succeeded: number
  retried: number
  failed: number
}

/** A claim the loop holds: claimed from storage, or handed over by fan-out. */
export interface Held {
  readonly claimed: ClaimedDelivery
  /** Moved on by each renewal that found the claim still held. */
  leaseUntil: number
  /** Set when `run` handed it over before recording it. */
  readonly batch?: Batch | undefined
}

/**
 * The loop's claims: every one taken and not finished is renewed; at a stop, those not started
 * are given back and those running awaited up to the grace.
 */
export interface Claims {
  readonly live: Set<Held>
  /** Waiting for their rate-limit slot (`notBefore`) before their attempt. */
  readonly waiting: Set<Held>
  readonly running: Set<Held>
  stopping: boolean
  /** Notified at a stop whenever a running attempt ends. */
  readonly ended: Signal.Signal
  /** Attempts that ended while the loop was stopping, and claims given back then. */
  finishedAtStop: number
  readonly released: Array<Held>
  readonly abandoned: Array<Held>
  /** A failed renewal is said once, until one succeeds again. */
  renewFailing: boolean
}

/**
 * One delivery loop (`run`, or one `deliverDue` call). A lease holds until its result is written,
 * so nobody else sends the delivery in between.
 */
export interface Loop {
  readonly settings: Settings
  readonly lanes: Lanes.Lanes<Held>
  /** Attempt fibers running; each takes the next ready claim when its own ends (see `next`). */
  runners: number
  /** Starts a runner with its first claim. */
  readonly startRunner: (held: Held) => void
  readonly wanted: Signal.Signal
  readonly written: Signal.Signal
  readonly kick: Signal.Signal
  readonly room: Signal.Signal
  /** Flow-controlled webhooks: claimed no more than they start at once. */
  readonly controlled: Set<string>
  /** How far ahead a claim schedules rate-limited attempts (`ClaimRequest.horizonMs`). */
  readonly horizonMs: number
  /** Webhooks that may have due deliveries in storage that this loop does not hold. */
  mayHaveMore: Set<string>
  /** The last claim was cut short by the loop's room in all. */
  fullClaim: boolean
  readonly tally: Tally
  /** Wakes the claim at `retryAt`: a retry, or a rate-limited webhook's next slot. */
  readonly onRetry: (retryAt: number) => Effect.Effect<void>
  readonly debug: boolean
  /** Results waiting for the completer. */
  results: Array<Outcome>
  unwritten: number
  /** A failure is said once, until a write succeeds again. */
  writeFailing: boolean
  /** Set in `run`: fan-out hands fresh deliveries to this loop. */
  readonly fan: FanOut | undefined
  readonly claims: Claims
}

/** `run`'s fan-out: its lease, where reading has got to, and what was read and not recorded. */
export interface FanOut {
  readonly owner: string
  /** `undefined` without the lease. */
  position: string | undefined
  /** The position storage holds, as far as this loop knows. */
  stored: string | undefined
  leaseUntil: number
  /** Read and not recorded yet, in order. */
  batches: Array<Batch>
  readonly ready: Signal.Signal
  readLimit: number
  lastRead: number
  /** Later events wait behind an open transaction (see `OutboxRead`). */
  waiting: boolean
  /** The webhook whose full share holds the next event back, measured since `since`. */
  blocked: Blocked | undefined
  readonly drained: Signal.Signal
  /** Webhooks whose fresh deliveries fan-out stores (see `holdsBack` in `handOff.ts`). */
  readonly storing: Map<string, Storing>
  /** Batch numbers, in read order: the last one made, the last recorded. */
  made: number
  recorded: number
  /** The last batch in which each webhook had a delivery stored, not handed over. */
  readonly lastStored: Map<string, number>
  recordFailing: boolean
}

/** The webhook whose full share holds fan-out's next event back, and attempts of it ended since `since`. */
export interface Blocked {
  readonly webhookId: string
  since: number
  ended: number
  readonly drainedAt: number
}

/** A webhook whose fresh deliveries fan-out stores, measured over a window like a blocking one. */
export interface Storing {
  since: number
  ended: number
  holding: boolean
}

/**
 * A fan-out batch handed to the loop before it is recorded: results are kept for the insert
 * (`Open`), go after it (`Writing`, `Written`), or nowhere (`Dropped`).
 */
export type BatchState =
  | { readonly _tag: "Open"; readonly outcomes: Map<string, Outcome>; inFlight: number }
  | { readonly _tag: "Writing"; readonly outcomes: Map<string, Outcome>; readonly after: Array<Outcome> }
  | { readonly _tag: "Written" }
  | { readonly _tag: "Dropped" }

/** A fan-out batch: its deliveries, the position after it, and where its results go. */
export interface Batch {
  readonly number: number
  readonly deliveries: ReadonlyArray<NewDelivery>
  /** The outbox position after the batch's last event. */
  readonly position: string
  /** When it is recorded at the latest, whether or not its attempts have ended. */
  readonly recordBy: number
  state: BatchState
  /** Deliveries whose attempt a stop cut short: recorded with it counted. */
  readonly abandoned: Set<string>
}

/** A fresh loop; `run` passes its fan-out, `deliverDue` none. */
export const makeLoop = (
  settings: Settings,
  parts: {
    readonly wanted: Signal.Signal
    readonly onRetry: Loop["onRetry"]
    readonly debug: boolean
    readonly startRunner: (held: Held) => void
    readonly fan: FanOut | undefined
  }
): Loop => ({
  settings,
  lanes: Lanes.make(settings.perWebhookConcurrency),
  runners: 0,
  startRunner: parts.startRunner,
  wanted: parts.wanted,
  written: Signal.make(),
  kick: Signal.make(),
  room: Signal.make(),
  controlled: new Set(),
  // `deliverDue` attempts what may start now; `run` schedules a rate-limited webhook's attempts ahead.
  horizonMs: parts.fan === undefined ? 0 : FlowControl.horizonMs,
  mayHaveMore: new Set(),
  fullClaim: false,
  tally: { attempts: 0, succeeded: 0, retried: 0, failed: 0 },
  onRetry: parts.onRetry,
  debug: parts.debug,
  results: [],
  unwritten: 0,
  writeFailing: false,
  fan: parts.fan,
  claims: {
    live: new Set(),
    waiting: new Set(),
    running: new Set(),
    stopping: false,
    ended: Signal.make(),
    finishedAtStop: 0,
    released: [],
    abandoned: [],
    renewFailing: false
  }
})

/** `run`'s fan-out, without the lease yet. */
export const makeFanOut = (settings: Settings, owner: string): FanOut => ({
  owner,
  position: undefined,
  stored: undefined,
  leaseUntil: 0,
  batches: [],
  ready: Signal.make(),
  readLimit: settings.fanOutBatchSize,
  lastRead: 0,
  waiting: false,
  blocked: undefined,
  drained: Signal.make(),
  storing: new Map(),
  made: 0,
  recorded: 0,
  lastStored: new Map(),
  recordFailing: false
})
