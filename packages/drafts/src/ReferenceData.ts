/**
 * Transport shapes, vehicle classes and products behind a port: read-only to Waybill, seeded by
 * the embedder (the reference server reads a JSON file).
 * @since 0.1.0
 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import { VehicleClass } from "@waybill/recurring/VehicleClass"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * A transport shape: which outputs a draft produces, whether it may be a recurring master, and
 * the dotted paths activation requires.
 * @since 0.1.0
 */
export const TransportShape = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  outputs: Schema.Array(Schema.String),
  recurring: Schema.Struct({ enabled: Schema.Boolean }),
  requiredFields: Schema.Array(Schema.String)
}).annotations({ identifier: "TransportShape" })

/** @since 0.1.0 */
export type TransportShape = typeof TransportShape.Type

/** A vehicle class, as `@waybill/recurring` defines it. @since 0.1.0 */
export { VehicleClass } from "@waybill/recurring/VehicleClass"

/** A product a draft can be evaluated against. @since 0.1.0 */
export const Product = Schema.Struct({
  id: Schema.String,
  name: Schema.String
}).annotations({ identifier: "Product" })

/** @since 0.1.0 */
export type Product = typeof Product.Type

/** The reference-data file (`WAYBILL_REFERENCE_DATA`); keys of other packages are ignored here. @since 0.1.0 */
export const ReferenceDataSet = Schema.Struct({
  transportShapes: Schema.Array(TransportShape),
  vehicleClasses: Schema.Array(VehicleClass),
  products: Schema.Array(Product)
}).annotations({ identifier: "ReferenceDataSet" })

/** @since 0.1.0 */
export type ReferenceDataSet = typeof ReferenceDataSet.Type

/** The port; every read is per workspace, so an embedder may give each tenant its own data. @since 0.1.0 */
export class ReferenceData extends Context.Tag("@waybill/drafts/ReferenceData")<
  ReferenceData,
  {
    readonly transportShapes: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<TransportShape>>
    readonly vehicleClasses: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<VehicleClass>>
    readonly products: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<Product>>
    readonly product: (workspaceId: WorkspaceId, id: string) => Effect.Effect<Option.Option<Product>>
  }
>() {}

/** A lookup by id over a list, as the pure rules take them. @since 0.1.0 */
export const lookup = <A extends { readonly id: string }>(
  items: ReadonlyArray<A>
): ((id: string) => Option.Option<A>) => {
  const byId = new Map(items.map((item) => [item.id, item] as const))
  return (id) => Option.fromNullable(byId.get(id))
}

/** Serves one fixed data set to every workspace. @since 0.1.0 */
export const make = (data: ReferenceDataSet): ReferenceData["Type"] => {
  const product = lookup(data.products)
  return ReferenceData.of({
    transportShapes: () => Effect.succeed(data.transportShapes),
    vehicleClasses: () => Effect.succeed(data.vehicleClasses),
    products: () => Effect.succeed(data.products),
    product: (_, id) => Effect.succeed(product(id))
  })
}

/** An in-memory layer over one fixed data set. @since 0.1.0 */
export const layerMemory = (data: ReferenceDataSet): Layer.Layer<ReferenceData> =>
  Layer.succeed(ReferenceData, make(data))

/** Decodes a reference-data file's JSON, failing with every problem found. @since 0.1.0 */
export const decode = Schema.decodeUnknown(ReferenceDataSet, { errors: "all" })
