/** The Waybill HTTP API: the contract as code. OpenAPI and the typed client derive from it. @since 0.1.0 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import * as EventsOpenApi from "@waybill/events/OpenApi"
import { BadRequest, Forbidden } from "./ApiError.js"
import { ConsoleApi } from "./ConsoleApi.js"
import { ConsoleTokensApi } from "./ConsoleTokensApi.js"
import { DraftsApi, ProductsApi } from "./DraftsApi.js"
import { withExtraComponents, withoutSyntheticIds } from "./internal/openApi.js"
import { ReferenceDataApi } from "./ReferenceDataApi.js"
import { SystemApi } from "./SystemApi.js"
import { ToursApi } from "./ToursApi.js"
import { WebhooksApi } from "./WebhooksApi.js"

/** The whole API: every group, with `BadRequest` and `Forbidden` on every endpoint. @since 0.1.0 */
export class WaybillApi extends HttpApi.make("waybill")
  .add(SystemApi)
  .add(ReferenceDataApi)
  .add(DraftsApi)
  .add(ProductsApi)
  .add(ToursApi)
  .add(WebhooksApi)
  .add(ConsoleApi)
  .add(ConsoleTokensApi)
  .addError(BadRequest)
  // A console token beyond its scope is refused before routing (contract §5).
  .addError(Forbidden)
  // The webhooks section comes from the event catalogue, its single source of truth.
  .annotate(OpenApi.Transform, (document) => withoutSyntheticIds(withExtraComponents(EventsOpenApi.addTo(document))))
  .annotate(OpenApi.Title, "Waybill")
  .annotate(OpenApi.Version, "0.1.0")
  .annotate(
    OpenApi.Description,
    "Transport drafts, recurring tours and webhooks. Authenticate with `Authorization: Bearer <apiKey>`; the operator console's routes also take a console token (`Authorization: Bearer wbc_…`, see /console/tokens), every other route answers it 403."
  ) {}
