/** Read-only reference data: transport shapes, vehicle classes, products. @since 0.1.0 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Product, TransportShape, VehicleClass } from "@waybill/drafts/ReferenceData"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"

const list = <A, I>(item: Schema.Schema<A, I>) => Schema.Struct({ data: Schema.Array(item) })

/** The reference-data group. @since 0.1.0 */
export class ReferenceDataApi extends HttpApiGroup.make("referenceData")
  .add(HttpApiEndpoint.get("transportShapes", "/transport-shapes").addSuccess(list(TransportShape)))
  .add(HttpApiEndpoint.get("vehicleClasses", "/vehicle-classes").addSuccess(list(VehicleClass)))
  .add(HttpApiEndpoint.get("products", "/products").addSuccess(list(Product)))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Reference data")
  .annotate(OpenApi.Description, "Reference data the server was seeded with") {}
