/**
 * A fan-out batch handed to the loop before it is recorded, and the one owner of its state: results
 * are kept for the insert (`Open`), go after it (`Writing`, `Written`), or nowhere (`Dropped`).
 */
import type { NewDelivery } from "../DeliveryStore.js"
import type { Outcome } from "./attempts.js"

export type State =
  | { readonly _tag: "Open"; readonly outcomes: Map<string, Outcome>; inFlight: number }
  | { readonly _tag: "Writing"; readonly outcomes: Map<string, Outcome>; readonly after: Array<Outcome> }
  | { readonly _tag: "Written" }
  | { readonly _tag: "Dropped" }

export interface Batch {
  readonly number: number
  readonly deliveries: ReadonlyArray<NewDelivery>
  /** The outbox position after the batch's last event. */
  readonly position: string
  /** When it is recorded at the latest, whether or not its attempts have ended. */
  readonly recordBy: number
  readonly state: State
  /** Deliveries whose attempt a stop cut short: recorded with it counted. */
  readonly abandoned: Set<string>
}

interface Mutable {
  state: State
}

const set = (batch: Batch, state: State) => {
  ;(batch as Mutable).state = state
}

export const open = (
  number: number,
  deliveries: ReadonlyArray<NewDelivery>,
  position: string,
  inFlight: number,
  recordBy: number
): Batch => ({
  number,
  deliveries,
  position,
  recordBy,
  state: { _tag: "Open", outcomes: new Map(), inFlight },
  abandoned: new Set()
})

export const inFlight = (batch: Batch): number => (batch.state._tag === "Open" ? batch.state.inFlight : 0)

export const isDropped = (batch: Batch): boolean => batch.state._tag === "Dropped"

export const isUnrecorded = (batch: Batch): boolean => batch.state._tag === "Open" || batch.state._tag === "Writing"

/** What the loop does with an attempt's result: `record` it as an update, wake the recorder, or nothing. */
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
 * Starts the batch's write: the rows to insert, with the results in so far, except a final failure,
 * which goes after as an update (that raises its alert). At a stop, rows without a result go unleased.
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
      rows.push(
        stopping && outcome === undefined
          ? {
              ...delivery,
              lease: undefined,
              abandoned: (delivery.abandoned ?? 0) + (batch.abandoned.has(delivery.id) ? 1 : 0)
            }
          : delivery
      )
    }
  }
  set(batch, { _tag: "Writing", outcomes, after })
  return { rows, carried }
}

/** The write committed: the results that go after it, as updates. */
export const written = (batch: Batch): ReadonlyArray<Outcome> => {
  const after = batch.state._tag === "Writing" ? batch.state.after : []
  set(batch, { _tag: "Written" })
  return after
}

export const drop = (batch: Batch): void => set(batch, { _tag: "Dropped" })

/** A stop cut the delivery's attempt short (see `startWriting`). */
export const abandon = (batch: Batch, deliveryId: string): void => {
  batch.abandoned.add(deliveryId)
}
