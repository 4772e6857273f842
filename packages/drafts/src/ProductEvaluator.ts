/**
 * The product-evaluation port behind `POST /products/{productId}/execute` and the reference
 * evaluator (docs/products.md).
 * @since 0.1.0
 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type Draft, JsonObject } from "./Draft.js"
import { forEachCountry } from "./internal/countries.js"
import { own } from "./internal/json.js"
import type { Product } from "./ReferenceData.js"
import { ProductsMode, type TransportForProducts } from "./TransportForProducts.js"

/** What an evaluator gets: the product, the draft, and its transport already parsed. @since 0.1.0 */
export interface Evaluation {
  readonly workspaceId: WorkspaceId
  readonly product: Product
  readonly draft: Draft
  readonly transport: TransportForProducts
}

/** The body of `POST /products/{productId}/execute`. @since 0.1.0 */
export const ExecuteRequest = Schema.Struct({ draftId: Schema.String }).annotations({
  identifier: "ExecuteProductRequest"
})

/** @since 0.1.0 */
export type ExecuteRequest = typeof ExecuteRequest.Type

/** The 200 answer of `POST /products/{productId}/execute`. @since 0.1.0 */
export const ExecuteResult = Schema.Struct({
  productId: Schema.String,
  draftId: Schema.String,
  productsMode: ProductsMode,
  result: JsonObject
}).annotations({ identifier: "ExecuteProductResult" })

/** @since 0.1.0 */
export type ExecuteResult = typeof ExecuteResult.Type

/** The port: turns a parsed draft and a product into the `result` object of the answer. @since 0.1.0 */
export class ProductEvaluator extends Context.Tag("@waybill/drafts/ProductEvaluator")<
  ProductEvaluator,
  { readonly evaluate: (evaluation: Evaluation) => Effect.Effect<JsonObject> }
>() {}

const weightOf = (load: unknown): number => {
  const weight = own(load, "weightKg")
  return typeof weight === "number" && Number.isFinite(weight) && weight >= 0 ? weight : 0
}

/** The reference evaluator: no pricing, a deterministic summary of what a real one works from. @since 0.1.0 */
export const reference = (evaluation: Evaluation): JsonObject => {
  const { product, transport } = evaluation
  const stops = own(transport.multiStopData, "stops")
  const stopList: ReadonlyArray<unknown> = Array.isArray(stops) ? stops : []
  const totalWeightKg = stopList.reduce<number>((sum, stop) => {
    const loads = own(stop, "loads")
    return sum + (Array.isArray(loads) ? loads.reduce<number>((total, load) => total + weightOf(load), 0) : 0)
  }, 0)
  const countries = new Set<string>()
  // The transport parsed, so every country code in it is valid (or null).
  forEachCountry(transport, (value) => {
    if (typeof value === "string") countries.add(value)
    return typeof value === "object"
  })
  const vehicleClass = own(transport.tour, "vehicleClass")
  return {
    evaluator: "reference",
    product: { id: product.id, name: product.name },
    productsMode: transport.productsMode,
    shipper: {
      shipperId: transport.shipperId,
      shipperTeamId: transport.shipperTeamId,
      shipperUserId: transport.shipperUserId
    },
    shipmentCount: transport.shipments.length,
    stopCount: stopList.length,
    totalWeightKg: Math.round(totalWeightKg * 1000) / 1000,
    countries: Array.from(countries).sort(),
    vehicleClass: typeof vehicleClass === "string" ? vehicleClass : null,
    selectedProductCount: transport.products?.length ?? 0
  }
}

/** The reference evaluator as a layer. @since 0.1.0 */
export const layerReference: Layer.Layer<ProductEvaluator> = Layer.succeed(
  ProductEvaluator,
  ProductEvaluator.of({ evaluate: (evaluation) => Effect.sync(() => reference(evaluation)) })
)
