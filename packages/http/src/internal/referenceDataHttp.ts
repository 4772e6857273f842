import { CurrentWorkspace } from "@waybill/core/Workspace"
import { Product, ReferenceData, TransportShape, VehicleClass } from "@waybill/drafts/ReferenceData"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { encodedOnce } from "./encodedOnce.js"
import { type Operations, serveGroup } from "./operations.js"

// Reference data does not change while the server runs: each list is encoded once, and kept for
// as long as the port answers with the same array.
const cachedList = <A, I>(
  item: Schema.Schema<A, I>,
  read: (workspaceId: CurrentWorkspace["Type"]["id"]) => Effect.Effect<ReadonlyArray<A>>
) => {
  const answer = encodedOnce(Schema.Struct({ data: Schema.Array(item) }), (items: ReadonlyArray<A>) => ({
    data: items
  }))
  return Effect.flatMap(CurrentWorkspace, (workspace) => Effect.map(read(workspace.id), answer))
}

/** The reference-data group's operations. */
export const referenceDataOperations = Effect.map(ReferenceData, (data) => {
  const transportShapes = cachedList(TransportShape, data.transportShapes)
  const vehicleClasses = cachedList(VehicleClass, data.vehicleClasses)
  const products = cachedList(Product, data.products)
  return {
    transportShapes: () => transportShapes,
    vehicleClasses: () => vehicleClasses,
    products: () => products
  } satisfies Operations<"referenceData">
})

export const ReferenceDataLive = serveGroup("referenceData", referenceDataOperations)
