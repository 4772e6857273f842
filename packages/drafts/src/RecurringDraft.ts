/** Drafts as the recurring generator sees them, for adapters of its `RecurringMasterRepository`. @since 0.1.0 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import type { RecurringMaster, Stop } from "@waybill/recurring/RecurringMaster"
import type { ClaimedMaster } from "@waybill/recurring/RecurringMasterRepository"
import * as Option from "effect/Option"
import type { Draft } from "./Draft.js"
import { isObject, own } from "./internal/json.js"
import { vehicleClassOf } from "./internal/rules.js"

const TIME = /^([01]\d|2[0-3]):[0-5]\d$/

const toStop = (stop: unknown): Option.Option<Stop> => {
  const address = own(stop, "address")
  const window = own(stop, "timeWindow")
  const from = own(window, "from")
  const to = own(window, "to")
  if (!isObject(address) || typeof from !== "string" || typeof to !== "string" || !TIME.test(from) || !TIME.test(to)) {
    return Option.none()
  }
  const dayOffset = own(stop, "dayOffset")
  const loads = own(stop, "loads")
  return Option.some({
    address,
    timeWindow: { from, to },
    dayOffset: typeof dayOffset === "number" && Number.isInteger(dayOffset) && dayOffset >= 0 ? dayOffset : 0,
    // Stored leniently: a weight that is not a finite, non-negative number counts as none.
    loads: (Array.isArray(loads) ? loads : []).map((load) => {
      const weightKg = own(load, "weightKg")
      return typeof weightKg === "number" && Number.isFinite(weightKg) && weightKg >= 0 ? { weightKg } : {}
    })
  })
}

/**
 * The generator's view of a recurring master; none when the draft is not one or its transport
 * lacks what generation needs (only possible for data written around the service).
 * @since 0.1.0
 */
export const toRecurringMaster = (workspaceId: WorkspaceId, draft: Draft): Option.Option<RecurringMaster> => {
  if (draft.recurringSchedule === null) return Option.none()
  const schedule = draft.recurringSchedule
  const stops = own(own(draft.transport, "multiStopData"), "stops")
  if (!Array.isArray(stops)) return Option.none()
  return Option.map(
    Option.all({ vehicleClass: vehicleClassOf(draft.transport), stops: Option.all(stops.map(toStop)) }),
    ({ stops, vehicleClass }) => ({ id: draft.id, workspaceId, name: draft.name, schedule, vehicleClass, stops })
  )
}

/**
 * Epoch seconds of an active master's latest activation or resumption: its `updatedAt`, as
 * nothing else leads into or changes an `active-recurring` draft.
 * @since 0.1.0
 */
export const activeSince = (draft: Draft): number => draft.updatedAt

/**
 * What a `claim` adapter returns for a locked draft row and its cursor; none unless the draft is
 * an active or paused master.
 * @since 0.1.0
 */
export const toClaimedMaster = (
  workspaceId: WorkspaceId,
  draft: Draft,
  cursor: number | null
): Option.Option<ClaimedMaster> => {
  const status =
    draft.status === "active-recurring" ? "active" : draft.status === "paused-recurring" ? "paused" : undefined
  if (status === undefined) return Option.none()
  return Option.map(toRecurringMaster(workspaceId, draft), (master) => ({
    master,
    status,
    cursor,
    activeSince: activeSince(draft)
  }))
}
