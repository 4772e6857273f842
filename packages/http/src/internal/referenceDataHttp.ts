import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import { Product, ReferenceData, TransportShape, VehicleClass } from "@waybill/drafts/ReferenceData"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Operations, serveGroup } from "./operations.js"

// Reference data does not change while the server runs: each list is encoded once, and kept for
// as long as the port answers with the same array.
const cachedList = <A, I>(
  item: Schema.Schema<A, I>,
  read: (workspaceId: CurrentWorkspace["Type"]["id"]) => Effect.Effect<ReadonlyArray<A>>
) => {
  const encode = Schema.encodeSync(Schema.Struct({ data: Schema.Array(item) }))
  const responses = new WeakMap<ReadonlyArray<A>, HttpServerResponse.HttpServerResponse>()
  return Effect.flatMap(CurrentWorkspace, (workspace) =>
    Effect.map(read(workspace.id), (items) => {
      let response = responses.get(items)
      if (response === undefined) {
        response = HttpServerResponse.unsafeJson(encode({ data: items }), {
          status: 200,
          contentType: "application/json"
        })
        responses.set(items, response)
      }
      return response
    })
  )
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
