import type { WorkspaceId } from "@waybill/core/Workspace"
import { Schema } from "effect"
import * as RecurringMaster from "../src/RecurringMaster.js"

/** Epoch seconds of an ISO instant (explicit offset or Z), independent of the process zone. */
export const at = (iso: string): number => {
  const ms = Date.parse(iso)
  if (Number.isNaN(ms) || !/(Z|[+-]\d{2}:\d{2})$/.test(iso)) throw new Error(`bad instant ${iso}`)
  return ms / 1000
}

export const WORKSPACE = "wsp_test" as WorkspaceId

export interface MasterInput {
  readonly id?: string
  readonly name?: string | null
  readonly vehicleClass?: string
  readonly schedule: Record<string, unknown>
  readonly stops?: ReadonlyArray<{
    readonly from: string
    readonly to: string
    readonly dayOffset?: number
    readonly weights?: ReadonlyArray<number | undefined>
  }>
}

/** A decoded master; two stops 08:00–10:00 and 14:00–16:00 on the trigger day unless given. */
export const master = (input: MasterInput): RecurringMaster.RecurringMaster =>
  Schema.decodeUnknownSync(RecurringMaster.RecurringMaster)({
    id: input.id ?? "drf_master",
    workspaceId: WORKSPACE,
    name: input.name === undefined ? "Line {{ weekday }} {{date}}" : input.name,
    vehicleClass: input.vehicleClass ?? "vc_12t",
    schedule: input.schedule,
    stops: (
      input.stops ?? [
        { from: "08:00", to: "10:00" },
        { from: "14:00", to: "16:00" }
      ]
    ).map((stop, index) => ({
      address: { name: `Stop ${index + 1}`, countryCode: "DEU" },
      timeWindow: { from: stop.from, to: stop.to },
      dayOffset: stop.dayOffset ?? 0,
      loads: (stop.weights ?? []).map((weightKg) => (weightKg === undefined ? {} : { weightKg }))
    }))
  })

export const CLASSES = [
  { id: "vc_3t5", name: "3.5 t van", maxWeightKg: 1000, rank: 1 },
  { id: "vc_7t5", name: "7.5 t box", maxWeightKg: 2500, rank: 2 },
  { id: "vc_12t", name: "12 t truck", maxWeightKg: 6000, rank: 3 },
  { id: "vc_40t", name: "40 t trailer", maxWeightKg: 24000, rank: 4 }
]

/** Runs a test body with the process time zone set, restoring it afterwards. */
export const processZone = (zone: string): { readonly set: () => void; readonly restore: () => void } => {
  const previous = process.env.TZ
  return {
    set: () => {
      process.env.TZ = zone
    },
    restore: () => {
      if (previous === undefined) delete process.env.TZ
      else process.env.TZ = previous
    }
  }
}
