/**
 * What the engine expands: a recurring master reduced to the fields generation needs. The
 * drafts side maps a draft onto it; this package never reads drafts.
 * @since 0.1.0
 */
import { WorkspaceId } from "@waybill/core/Workspace"
import * as Schema from "effect/Schema"
import { RecurringSchedule } from "./Schedule.js"

/** A 24-hour wall-clock time `HH:MM`. @since 0.1.0 */
export const TimeOfDay = Schema.String.pipe(Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/)).annotations({
  identifier: "TimeOfDay",
  message: () => ({ message: "must be a 24-hour time HH:MM", override: true })
})

/** A load of a stop; only its total weight matters to generation. @since 0.1.0 */
export const Load = Schema.Struct({
  weightKg: Schema.optionalWith(Schema.Number.pipe(Schema.finite(), Schema.nonNegative()), { exact: true })
}).annotations({ identifier: "RecurringLoad" })

/**
 * A stop: its address (copied onto every tour), daily time window, day relative to the trigger
 * day, and loads.
 * @since 0.1.0
 */
export const Stop = Schema.Struct({
  address: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  timeWindow: Schema.Struct({ from: TimeOfDay, to: TimeOfDay }),
  dayOffset: Schema.Int.pipe(Schema.nonNegative()),
  loads: Schema.Array(Load)
}).annotations({ identifier: "RecurringStop" })

/** @since 0.1.0 */
export type Stop = typeof Stop.Type

/**
 * The input of expansion and generation: `id` is the draft id, `name` the name template,
 * `vehicleClass` the master's vehicle class id.
 * @since 0.1.0
 */
export const RecurringMaster = Schema.Struct({
  id: Schema.String,
  workspaceId: WorkspaceId,
  name: Schema.NullOr(Schema.String),
  schedule: RecurringSchedule,
  vehicleClass: Schema.String,
  stops: Schema.Array(Stop)
}).annotations({ identifier: "RecurringMaster" })

/** @since 0.1.0 */
export type RecurringMaster = typeof RecurringMaster.Type

/** The sum of `weightKg` over every load of every stop, a load without a weight counting 0. @since 0.1.0 */
export const totalWeightKg = (master: RecurringMaster): number => {
  let total = 0
  for (const stop of master.stops) for (const load of stop.loads) total += load.weightKg ?? 0
  return total
}
