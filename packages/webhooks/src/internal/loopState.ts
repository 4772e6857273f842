/**
 * The state the dispatcher's modules share: its ports and settings (`Env`), a delivery loop
 * (`Loop`) with the work it holds (`Held`), and `run`'s fan-out (`FanOut`), whose batches of
 * fresh deliveries (`Batch`) are handed to the loop before they are recorded.
 */
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

/** The dispatcher's ports, settings and shared parts, as its modules use them. */
export interface Env {
  readonly settings: Settings
  readonly outbox: OutboxReader["Type"]
  readonly store: DeliveryStore["Type"]
  readonly alerts: FailureAlerts["Type"]
  readonly repository: WebhookRepository["Type"]
  readonly transactor: Transactor["Type"]
  readonly matcher: Matcher
  readonly attemptOne: AttemptOne
  /** Wakes `run`'s delivery loop. */
  readonly deliverWake: Signal.Signal
  /** Logs a failed write: briefly when the database cannot be reached, else with its cause. */
  readonly logWriteFailure: (message: string, cause: Cause.Cause<unknown>) => Effect.Effect<void>
}

/** Attempts made by a delivery loop, and how they ended. */
export interface Tally {
  attempts: number
  succeeded: number
  retried: number
  failed: number
}

/** Work a loop holds: a claimed delivery, its lease, and the fan-out batch it came in, if any. */
export interface Held {
  readonly claimed: ClaimedDelivery
  readonly leaseUntil: number
  /** The fan-out batch it came in, when `run` handed it over before recording it. */
  readonly batch?: Batch | undefined
}

/**
 * One delivery loop (`run`, or one `deliverDue` call): the work it claimed, waiting in
 * per-webhook lanes for a slot; long-lived workers that take it (no fiber per delivery); and
 * the completer, which writes results in batches while the workers go on sending (group
 * commit). A delivery's lease holds until its result is written, so nobody else sends it in
 * between; the loop claims no more while too many results wait to be written.
 *
 * Claims come in batches: the loop holds up to `concurrency` attempts in flight and as many
 * waiting (per webhook `perWebhookConcurrency` of each), and claims again once a webhook's
 * lane, or the whole, is half empty.
 */
export interface Loop {
  readonly lanes: Lanes.Lanes<Held>
  /** Where idle workers wait for work handed to them (`dispatchIdle`). */
  readonly idle: Queue.Queue<Held>
  /** Claiming is worth trying again. */
  readonly wanted: Signal.Signal
  /** The completer wrote a batch. */
  readonly written: Signal.Signal
  /** The completer has results to write. */
  readonly kick: Signal.Signal
  /** Webhooks that may have due deliveries in storage that this loop does not hold. */
  /** Webhooks whose last claimed delivery was flow-controlled: claimed no more than they start. */
  controlled: Set<string>
  mayHaveMore: Set<string>
  /** The last claim was cut short by the loop's room in all. */
  fullClaim: boolean
  readonly tally: Tally
  readonly onRetry: (retryAt: number) => Effect.Effect<void>
  readonly debug: boolean
  batch: Array<Outcome>
  unwritten: number
  /** The last write of results failed: a failure is said once, until a write succeeds again. */
  writeFailing: boolean
  /** Room freed up for fan-out to read more events. */
  readonly room: Signal.Signal
  /** Set in `run`: fan-out hands fresh deliveries to this loop. */
  fan: FanOut | undefined
}

/** `run`'s fan-out: its lease, where reading has got to, and what was read and not recorded. */
export interface FanOut {
  /** This loop's name for the fan-out lease. */
  readonly owner: string
  /** Where reading has got to; `undefined` without the lease. */
  position: string | undefined
  /** The position storage holds, as far as this loop knows. */
  stored: string | undefined
  leaseUntil: number
  /** Read and not recorded yet, in order. */
  batches: Array<Batch>
  /** The first batch may be ready to record. */
  readonly ready: Signal.Signal
  /** Events read at most at once. */
  readLimit: number
  /** Events the last read found. */
  lastRead: number
  /** The last read saw later events it could not read yet (see `OutboxRead`). */
  waiting: boolean
  /**
   * The webhook whose full share holds the next event back, since when, how many of its
   * attempts ended since then, and at how much work it counts as drained (half what it held).
   */
  blocked: { readonly webhookId: string; since: number; ended: number; drainedAt: number } | undefined
  /** The blocking webhook's work went down to half its share, or its storage caught up. */
  readonly drained: Signal.Signal
  /** Webhooks whose fresh deliveries fan-out stores (see `holdsBack` in `handOff.ts`). */
  readonly storing: Map<string, Storing>
  /** Batches are numbered in the order they are read: the last one made, the last recorded. */
  made: number
  recorded: number
  /** The last batch in which each webhook had a delivery stored, not handed over. */
  readonly lastStored: Map<string, number>
  /** The last record failed: a failure is said once, until a record succeeds again. */
  recordFailing: boolean
}

/**
 * A webhook whose fresh deliveries fan-out stores, measured over a window like a blocking one:
 * since when, how many of its attempts ended since then, and whether fan-out holds its next
 * event back until storage has caught up.
 */
export interface Storing {
  since: number
  ended: number
  holding: boolean
}
