/** Transport drafts and their actions, and product evaluation. @since 0.1.0 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { CreateDraft } from "@waybill/drafts/CreateDraft"
import { ActionRequest, ActionResult, Draft } from "@waybill/drafts/Draft"
import { ListParams } from "@waybill/drafts/DraftService"
import { ExecuteRequest, ExecuteResult } from "@waybill/drafts/ProductEvaluator"
import { MAX_PREVIEW, Preview } from "@waybill/recurring/Occurrence"
import * as Schema from "effect/Schema"
import { Conflict, NotFound, PreconditionFailed } from "./ApiError.js"
import { Authentication } from "./Authentication.js"
import { allErrors } from "./internal/allErrors.js"
import { idempotentPost, pagedList } from "./internal/endpoints.js"
import { documentedUnknown } from "./internal/openApi.js"

const draftId = HttpApiSchema.param("id", Schema.String)
const productId = HttpApiSchema.param("productId", Schema.String)

/** A page of drafts. @since 0.1.0 */
export const DraftPage = Schema.Struct({
  data: Schema.Array(Draft),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DraftPage" })

/** The window of the occurrences dry run, in calendar days. @since 0.1.0 */
export const occurrenceDays = { default: 14, min: 1, max: 366 } as const

/** The query of `GET /drafts/{id}/occurrences`: `days`, an integer from 1 to 366 (default 14). @since 0.1.0 */
export const OccurrencesParams = Schema.Struct({
  days: Schema.optionalWith(
    // The description sits on the encoded side, where OpenAPI reads a query parameter.
    Schema.compose(
      Schema.String.annotations({
        description: `Calendar days in the schedule's zone: an integer from ${occurrenceDays.min} to ${occurrenceDays.max} (default ${occurrenceDays.default})`
      }),
      Schema.NumberFromString
    )
      .pipe(Schema.int(), Schema.between(occurrenceDays.min, occurrenceDays.max))
      .annotations({
        message: () => ({
          message: `must be an integer from ${occurrenceDays.min} to ${occurrenceDays.max}`,
          override: true
        })
      }),
    // Exact: a present but bad value gets one issue, not a second "expected undefined".
    { exact: true }
  )
}).annotations({ identifier: "OccurrencesParams" })

/** The dry run's answer: the earliest 10,000 tours a master would generate, `truncated` if more. @since 0.1.0 */
export const OccurrencesPage = Schema.Struct({
  data: Schema.Array(Preview),
  truncated: Schema.optionalWith(
    Schema.Literal(true).annotations({
      description: `Present when more than ${MAX_PREVIEW.toLocaleString("en")} occurrences exist in the window: \`data\` holds the earliest ${MAX_PREVIEW.toLocaleString("en")}`
    }),
    { exact: true }
  )
}).annotations({ identifier: "OccurrencesPage" })

/** The drafts group: create, read, list, dry-run, act on and delete drafts. @since 0.1.0 */
export class DraftsApi extends HttpApiGroup.make("drafts")
  .add(
    idempotentPost("create", "/drafts", {
      payload: documentedUnknown(CreateDraft, "CreateDraftRequest", { checkOnEncode: true }),
      success: Draft,
      status: 201,
      summary: "Create a transport draft or a recurring master"
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/drafts").pipe(
      pagedList(ListParams, DraftPage, { summary: "List drafts, newest first" })
    )
  )
  .add(HttpApiEndpoint.get("get")`/drafts/${draftId}`.addSuccess(Draft).addError(NotFound))
  .add(
    HttpApiEndpoint.get("occurrences")`/drafts/${draftId}/occurrences`
      .setUrlParams(OccurrencesParams.annotations(allErrors))
      .addSuccess(OccurrencesPage)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Dry run: the tours a recurring master would generate in the next N days")
      .annotate(
        OpenApi.Description,
        "Triggers in [now, now + days calendar days) in the schedule's zone, inside the validity window, whatever the master's status and lead time; nothing is stored. At most 10,000 occurrences, the earliest, with `truncated: true` when more exist. 400 for a draft that is not a recurring master."
      )
  )
  .add(
    HttpApiEndpoint.post("act")`/drafts/${draftId}/actions`
      .setPayload(ActionRequest.annotations(allErrors))
      .addSuccess(ActionResult)
      .addError(NotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Activate, pause, resume or end a recurring master")
  )
  .add(
    HttpApiEndpoint.del("delete")`/drafts/${draftId}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .addError(Conflict)
      .annotate(OpenApi.Description, "A running (active or paused) master must be ended first: 409 conflict.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Drafts")
  .annotate(OpenApi.Description, "Transport drafts and recurring masters") {}

/** The products group: evaluating a product against a draft. @since 0.1.0 */
export class ProductsApi extends HttpApiGroup.make("products")
  .add(
    HttpApiEndpoint.post("execute")`/products/${productId}/execute`
      .setPayload(ExecuteRequest.annotations(allErrors))
      .addSuccess(ExecuteResult)
      .addError(PreconditionFailed)
      .annotate(
        OpenApi.Description,
        "Evaluates a product against a draft. 412 when the draft's transport does not parse against TransportForProducts."
      )
  )
  // Every route names a product: an unknown one (or draft) is a 404.
  .addError(NotFound)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Products")
  .annotate(OpenApi.Description, "Product evaluation") {}
