/**
 * The operator console's own routes: editing a webhook in place, and who is signed in. They are
 * not public API, so they are excluded from `/openapi.json` (docs/console.md).
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { ConsoleTokenScope } from "@waybill/core/ConsoleTokens"
import { RegisterWebhook, WebhookResponse } from "@waybill/webhooks/Webhook"
import * as Schema from "effect/Schema"
import { NotFound } from "./ApiError.js"
import { Authentication } from "./Authentication.js"
import { documentedUnknown } from "./internal/openApi.js"

const webhookId = HttpApiSchema.param("id", Schema.String)

/**
 * Who the console is signed in as: an API key (`manage`, no expiry) or a console token with its
 * scope, label and expiry.
 * @since 0.3.0
 */
export const ConsoleIdentity = Schema.Struct({
  auth: Schema.Literal("api-key", "console-token"),
  scope: ConsoleTokenScope,
  label: Schema.NullOr(Schema.String),
  expiresAt: Schema.NullOr(Schema.Int)
})

/**
 * `PUT /console/api/webhooks/{id}` (`console.updateWebhook`) and `GET /console/api/whoami`
 * (`console.whoami`).
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
  .add(HttpApiEndpoint.get("whoami", "/console/api/whoami").addSuccess(ConsoleIdentity))
  .middleware(Authentication)
  .annotate(OpenApi.Exclude, true) {}
