/**
 * The operator console's own route: editing a webhook in place. It is not public API, so it is
 * excluded from `/openapi.json` (docs/console.md).
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { RegisterWebhook, WebhookResponse } from "@waybill/webhooks/Webhook"
import * as Schema from "effect/Schema"
import { NotFound } from "./ApiError.js"
import { Authentication } from "./Authentication.js"
import { documentedUnknown } from "./internal/openApi.js"

const webhookId = HttpApiSchema.param("id", Schema.String)

/** `PUT /console/api/webhooks/{id}`, the client's `console.updateWebhook`. @since 0.1.0 */
export class ConsoleApi extends HttpApiGroup.make("console")
  .add(
    HttpApiEndpoint.put("updateWebhook")`/console/api/webhooks/${webhookId}`
      // The body of POST /webhooks; a secret omitted or sent as "********" keeps the stored one.
      .setPayload(documentedUnknown(RegisterWebhook, "RegisterWebhookRequest"))
      .addSuccess(WebhookResponse)
      .addError(NotFound)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Exclude, true) {}
