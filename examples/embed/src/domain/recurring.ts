/**
 * Recurring expansion without a server: the tours a master yields between two instants, with
 * DST-exact stop windows and the vehicle-class policy.
 *
 *   npx tsx examples/embed/src/domain/recurring.ts
 */
import { WorkspaceId } from "@waybill/core/Workspace"
import { expand, horizon } from "@waybill/recurring/Occurrence"
import type { RecurringMaster } from "@waybill/recurring/RecurringMaster"
import * as VehicleClass from "@waybill/recurring/VehicleClass"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

// The generator's view of a master (`toRecurringMaster(workspaceId, draft)` builds it from a draft).
const master: RecurringMaster = {
  id: "drf_example",
  workspaceId: Schema.decodeSync(WorkspaceId)("acme"),
  name: "Line {{ weekday }} {{ date }}",
  schedule: {
    cronExpressions: ["0 6 * * 1-5"],
    timezone: "Europe/Berlin",
    leadTimeDays: 7,
    vehicleClassAdjustmentStrategy: "recalculate"
  },
  vehicleClass: "vc_40t",
  stops: [
    {
      address: { city: "Hamburg" },
      timeWindow: { from: "06:00", to: "08:00" },
      dayOffset: 0,
      loads: [{ weightKg: 900 }]
    },
    { address: { city: "Berlin" }, timeWindow: { from: "13:00", to: "15:00" }, dayOffset: 1, loads: [] }
  ]
}

// Around the switch to summer time in Berlin (Sunday 28 March 2027).
const from = Date.parse("2027-03-25T00:00:00Z") / 1000
const to = horizon(from, master.schedule.leadTimeDays, master.schedule.timezone)

export const tours = Effect.runSync(
  expand(master, from, to).pipe(
    // `recalculate` asks the policy: here the reference rule over a fixed list of classes.
    Effect.provide(
      VehicleClass.layerFromList([
        { id: "vc_3t5", name: "3.5 t van", maxWeightKg: 1000, rank: 1 },
        { id: "vc_40t", name: "40 t articulated", maxWeightKg: 24000, rank: 4 }
      ])
    )
  )
)

for (const tour of tours) {
  console.log(tour.name, tour.vehicleClass, new Date(tour.stops[0]!.window.startsAt * 1000).toISOString())
}
