/** The tour a recurring master generates and its `tour-created` event. @since 0.1.0 */
import type { NewEvent } from "@waybill/events/EventOutbox"
import * as Schema from "effect/Schema"
import type { Occurrence } from "./Occurrence.js"
import { Window } from "./Occurrence.js"
import type { RecurringMaster } from "./RecurringMaster.js"
import { VehicleClassReason } from "./VehicleClass.js"

/** A stop of a generated tour. @since 0.1.0 */
export const TourStop = Schema.Struct({
  address: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  dayOffset: Schema.Int,
  window: Window
}).annotations({ identifier: "TourStop" })

/** A generated tour, as `GET /tours/{id}` and `tour-created` show it. @since 0.1.0 */
export const Tour = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  substatus: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  draftId: Schema.String,
  triggerAt: Schema.Int,
  triggerDate: Schema.String,
  timezone: Schema.String,
  vehicleClass: Schema.String,
  vehicleClassReason: VehicleClassReason,
  stops: Schema.Array(TourStop),
  properties: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  createdAt: Schema.Int
}).annotations({ identifier: "GeneratedTour" })

/** @since 0.1.0 */
export type Tour = typeof Tour.Type

/** The status of every generated tour. @since 0.1.0 */
export const PLANNED = "planned"

/** The tour of an occurrence: status `planned`, no substatus, no properties yet. @since 0.1.0 */
export const make = (
  master: RecurringMaster,
  occurrence: Occurrence,
  meta: { readonly id: string; readonly createdAt: number }
): Tour => ({
  id: meta.id,
  status: PLANNED,
  substatus: null,
  name: occurrence.name,
  draftId: master.id,
  triggerAt: occurrence.triggerAt,
  triggerDate: occurrence.triggerDate,
  timezone: master.schedule.timezone,
  vehicleClass: occurrence.vehicleClass,
  vehicleClassReason: occurrence.vehicleClassReason,
  stops: occurrence.stops,
  properties: {},
  createdAt: meta.createdAt
})

/** The event a new tour raises: `tour-created` `{ tour }`, keyed by the tour's id (contract §8). @since 0.1.0 */
export const created = (tour: Tour): NewEvent => ({ type: "tour-created", payload: { tour }, orderingKey: tour.id })
