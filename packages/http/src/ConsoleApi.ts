/**
 * The operator console's own route (contract §5 "Operator console"): editing a webhook in place,
 * keeping secrets that are not retyped. It belongs to the console, not to the public API: it is
 * excluded from `/openapi.json` (the public API still has no update) and documented in
 * `docs/console.md`. The typed client has it as `client.console.updateWebhook`.
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

/**
 * @since 0.1.0
 */
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
