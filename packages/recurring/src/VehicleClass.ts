/** Vehicle classes (reference data) and the `VehicleClassPolicy` port `recalculate` schedules use. @since 0.1.0 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { RecurringMaster } from "./RecurringMaster.js"

/** A vehicle class as the reference data lists it. @since 0.1.0 */
export const VehicleClass = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  maxWeightKg: Schema.Number.pipe(Schema.finite(), Schema.nonNegative()),
  rank: Schema.Int
}).annotations({ identifier: "VehicleClass" })

/** @since 0.1.0 */
export type VehicleClass = typeof VehicleClass.Type

/** Why a tour has its vehicle class. @since 0.1.0 */
export const VehicleClassReason = Schema.Literal("preserved", "recalculated", "no-class-fits").annotations({
  identifier: "VehicleClassReason"
})

/** @since 0.1.0 */
export type VehicleClassReason = typeof VehicleClassReason.Type

/** The vehicle class of a generated tour and the reason for it. @since 0.1.0 */
export interface Decision {
  readonly vehicleClass: string
  readonly reason: VehicleClassReason
}

/** What a policy is asked: the master (with its class) and the total weight of its loads. @since 0.1.0 */
export interface Request {
  readonly workspaceId: WorkspaceId
  readonly master: RecurringMaster
  readonly totalWeightKg: number
}

/** The port `recalculate` goes through; `preserve` never asks it. @since 0.1.0 */
export class VehicleClassPolicy extends Context.Tag("@waybill/recurring/VehicleClassPolicy")<
  VehicleClassPolicy,
  { readonly recalculate: (request: Request) => Effect.Effect<Decision> }
>() {}

/**
 * The reference rule: the lowest-rank class that carries the total weight (`recalculated`), else
 * the master's class (`no-class-fits`); ties go to the smaller `maxWeightKg`, then the id.
 * @since 0.1.0
 */
export const choose = (classes: ReadonlyArray<VehicleClass>, masterClass: string, totalWeightKg: number): Decision => {
  let best: VehicleClass | undefined
  for (const candidate of classes) {
    if (candidate.maxWeightKg < totalWeightKg) continue
    if (
      best === undefined ||
      candidate.rank < best.rank ||
      (candidate.rank === best.rank &&
        (candidate.maxWeightKg < best.maxWeightKg ||
          (candidate.maxWeightKg === best.maxWeightKg && candidate.id < best.id)))
    ) {
      best = candidate
    }
  }
  return best === undefined
    ? { vehicleClass: masterClass, reason: "no-class-fits" }
    : { vehicleClass: best.id, reason: "recalculated" }
}

/** The reference policy over classes loaded per workspace (e.g. from a reference-data port). @since 0.1.0 */
export const makeReference = (
  load: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<VehicleClass>>
): VehicleClassPolicy["Type"] => ({
  recalculate: (request) =>
    Effect.map(load(request.workspaceId), (classes) =>
      choose(classes, request.master.vehicleClass, request.totalWeightKg)
    )
})

/** The reference policy over a fixed list. @since 0.1.0 */
export const layerFromList = (classes: ReadonlyArray<VehicleClass>): Layer.Layer<VehicleClassPolicy> =>
  Layer.succeed(
    VehicleClassPolicy,
    makeReference(() => Effect.succeed(classes))
  )
