import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { WebhookService } from "@waybill/webhooks/WebhookService"
import * as Effect from "effect/Effect"
import { WaybillApi } from "../Api.js"
import * as ApiError from "../ApiError.js"

export const ConsoleLive = HttpApiBuilder.group(WaybillApi, "console", (handlers) =>
  Effect.map(WebhookService, (webhooks) =>
    handlers.handle("updateWebhook", ({ path, payload }) =>
      webhooks.update(path.id, payload).pipe(
        Effect.catchTags({
          ValidationError: (error) => Effect.fail(ApiError.badRequest(error)),
          WebhookNotFound: (error) => Effect.fail(ApiError.notFound(error))
        })
      )
    )
  )
)
