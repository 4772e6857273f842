/**
 * A fan-out batch: the fresh deliveries `run` hands to its own loop before recording them, and
 * the one owner of their state. `Open`: attempts go out and their results are kept for the
 * insert. `Writing`: the insert is under way; results that come now go after it. `Written`:
 * results are updates, as for any claimed delivery. `Dropped`: the write failed or the lease
 * was lost; the events are read again, and nothing of the batch is sent or written.
 */
import type { NewDelivery } from "../DeliveryStore.js"
import type { Outcome } from "./attempts.js"

/** Where a batch is in its life; only this module changes it. */
export type State =
  | { readonly _tag: "Open"; readonly outcomes: Map<string, Outcome>; inFlight: number }
  | { readonly _tag: "Writing"; readonly outcomes: Map<string, Outcome>; readonly after: Array<Outcome> }
  | { readonly _tag: "Written" }
  | { readonly _tag: "Dropped" }

/** A batch of fresh deliveries, from the events fan-out read together. */
export interface Batch {
  /** Its number in the fan-out's order. */
  readonly number: number
  readonly deliveries: ReadonlyArray<NewDelivery>
  /** The outbox position after the batch's last event. */
  readonly position: string
  /** When it is recorded at the latest, whether or not its attempts have ended. */
  readonly recordBy: number
  readonly state: State
}

interface Mutable {
  state: State
}

const set = (batch: Batch, state: State) => {
  ;(batch as Mutable).state = state
}

/** A batch whose `inFlight` deliveries were handed to the loop. */
export const open = (
  number: number,
  deliveries: ReadonlyArray<NewDelivery>,
  position: string,
  inFlight: number,
  recordBy: number
): Batch => ({ number, deliveries, position, recordBy, state: { _tag: "Open", outcomes: new Map(), inFlight } })

/** Handed-over deliveries whose attempt has not ended; 0 once the batch is no longer open. */
export const inFlight = (batch: Batch): number => (batch.state._tag === "Open" ? batch.state.inFlight : 0)

/** Whether the batch was given up: its deliveries are neither sent nor written. */
export const isDropped = (batch: Batch): boolean => batch.state._tag === "Dropped"

/** Whether the batch still has to be recorded (open, or a write that did not finish). */
export const isUnrecorded = (batch: Batch): boolean => batch.state._tag === "Open" || batch.state._tag === "Writing"

/**
 * What the loop does with the result of an attempt of this batch (`undefined`: the attempt was
 * not made): `record` it as an update (the batch is written), wake the recorder (`ready`: the
 * batch's last attempt ended), or nothing (the batch keeps it, or was dropped).
 */
export const settle = (batch: Batch, deliveryId: string, outcome: Outcome | undefined): "record" | "ready" | "kept" => {
  const state = batch.state
  switch (state._tag) {
    case "Written":
      return "record"
    case "Open":
      if (outcome !== undefined) state.outcomes.set(deliveryId, outcome)
      return --state.inFlight === 0 ? "ready" : "kept"
    case "Writing":
      if (outcome !== undefined) state.after.push(outcome)
      return "kept"
    case "Dropped":
      return "kept"
  }
}

/**
 * Starts the batch's write: the rows to insert, and the results they carry. A result in so far
 * goes with its delivery's insert, except a final failure, which goes after it as an update
 * (that raises its alert). At a stop (`stopping`) nothing is in flight any more: a delivery
 * without a result is inserted free to be sent at once.
 */
export const startWriting = (
  batch: Batch,
  stopping: boolean
): { readonly rows: ReadonlyArray<NewDelivery>; readonly carried: ReadonlyArray<Outcome> } => {
  const outcomes = batch.state._tag === "Open" || batch.state._tag === "Writing" ? batch.state.outcomes : new Map()
  // Results that came in during a write that did not finish go with this one.
  if (batch.state._tag === "Writing") for (const outcome of batch.state.after) outcomes.set(outcome.claimed.id, outcome)
  const after: Array<Outcome> = []
  const rows: Array<NewDelivery> = []
  const carried: Array<Outcome> = []
  for (const delivery of batch.deliveries) {
    const outcome = outcomes.get(delivery.id)
    if (outcome !== undefined && outcome.completion.status !== "failed") {
      carried.push(outcome)
      const { status, retryAt, attempt, latencyMs } = outcome.completion
      rows.push({
        ...delivery,
        lease: undefined,
        dueAt: retryAt ?? delivery.dueAt,
        outcome: { status, attempt, latencyMs }
      })
    } else {
      if (outcome !== undefined) after.push(outcome)
      rows.push(stopping && outcome === undefined ? { ...delivery, lease: undefined } : delivery)
    }
  }
  set(batch, { _tag: "Writing", outcomes, after })
  return { rows, carried }
}

/** The write committed: the results that go after it, to be written as updates. */
export const written = (batch: Batch): ReadonlyArray<Outcome> => {
  const after = batch.state._tag === "Writing" ? batch.state.after : []
  set(batch, { _tag: "Written" })
  return after
}

/** Gives the batch up: its events are read again. */
export const drop = (batch: Batch): void => set(batch, { _tag: "Dropped" })
