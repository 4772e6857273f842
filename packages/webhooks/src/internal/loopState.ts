/** The state the dispatcher's modules share: ports and settings, a delivery loop, `run`'s fan-out. */
import type { Transactor } from "@waybill/core/Transactor"
import type * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import type * as Queue from "effect/Queue"
import type { ClaimedDelivery, DeliveryStore } from "../DeliveryStore.js"
import type { FailureAlerts } from "../FailureAlerts.js"
import type { OutboxReader } from "../OutboxReader.js"
import type { WebhookRepository } from "../WebhookRepository.js"
import type { AttemptOne, Outcome } from "./attempts.js"
import type { Batch } from "./batch.js"
import type * as Lanes from "./lanes.js"
import type { Matcher } from "./matching.js"
import type { Settings } from "./settings.js"
import type * as Signal from "./signal.js"

export interface Env {
  readonly settings: Settings
  readonly outbox: OutboxReader["Type"]
  readonly store: DeliveryStore["Type"]
  readonly alerts: FailureAlerts["Type"]
  readonly repository: WebhookRepository["Type"]
  readonly transactor: Transactor["Type"]
  readonly matcher: Matcher
  readonly attemptOne: AttemptOne
  readonly deliverWake: Signal.Signal
  readonly logWriteFailure: (message: string, cause: Cause.Cause<unknown>) => Effect.Effect<void>
}

export interface Tally {
  attempts: number
  succeeded: number
  retried: number
  failed: number
}

export interface Held {
  readonly claimed: ClaimedDelivery
  /** Moved on by each renewal that found the claim still held. */
  leaseUntil: number
  /** Set when `run` handed it over before recording it. */
  readonly batch?: Batch | undefined
}

/**
 * The loop's claims (`leases.ts` alone writes it): every one taken and not finished is renewed;
 * at a stop, those not started are given back and those running awaited up to the grace.
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
  released: Array<Held>
  abandoned: Array<Held>
  /** A failed renewal is said once, until one succeeds again. */
  renewFailing: boolean
}

/**
 * One delivery loop (`run`, or one `deliverDue` call). A lease holds until its result is written,
 * so nobody else sends the delivery in between.
 */
export interface Loop {
  readonly lanes: Lanes.Lanes<Held>
  readonly idle: Queue.Queue<Held>
  readonly wanted: Signal.Signal
  readonly written: Signal.Signal
  readonly kick: Signal.Signal
  /** Flow-controlled webhooks: claimed no more than they start at once. */
  controlled: Set<string>
  /** How far ahead a claim schedules rate-limited attempts (`ClaimRequest.horizonMs`). */
  readonly horizonMs: number
  /** Webhooks that may have due deliveries in storage that this loop does not hold. */
  mayHaveMore: Set<string>
  /** The last claim was cut short by the loop's room in all. */
  fullClaim: boolean
  readonly tally: Tally
  readonly onRetry: (retryAt: number) => Effect.Effect<void>
  readonly debug: boolean
  batch: Array<Outcome>
  unwritten: number
  /** A failure is said once, until a write succeeds again. */
  writeFailing: boolean
  readonly room: Signal.Signal
  /** Set in `run`: fan-out hands fresh deliveries to this loop. */
  fan: FanOut | undefined
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
  blocked: { readonly webhookId: string; since: number; ended: number; drainedAt: number } | undefined
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

/** A webhook whose fresh deliveries fan-out stores, measured over a window like a blocking one. */
export interface Storing {
  since: number
  ended: number
  holding: boolean
}
