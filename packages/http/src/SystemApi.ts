/** Unauthenticated system endpoints: health. @since 0.1.0 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Unavailable } from "./ApiError.js"

/** The system group: liveness and readiness. @since 0.1.0 */
export class SystemApi extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
      .annotate(OpenApi.Summary, "Liveness: the process answers")
  )
  .add(
    HttpApiEndpoint.get("ready", "/health/ready")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready") }))
      .addError(Unavailable)
      .annotate(OpenApi.Summary, "Readiness: the database answers (503 with Retry-After while it does not)")
  )
  .annotate(OpenApi.Title, "System")
  .annotate(OpenApi.Description, "System endpoints; no API key needed") {}
