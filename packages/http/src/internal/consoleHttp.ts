import { WebhookService } from "@waybill/webhooks/WebhookService"
import * as Effect from "effect/Effect"
import * as ApiError from "../ApiError.js"
import { type Operations, serveGroup } from "./operations.js"

/** The console group's operation: editing a webhook in place. */
export const consoleOperations = Effect.map(
  WebhookService,
  (webhooks) =>
    ({
      updateWebhook: ({ path, payload }) =>
        webhooks.update(path.id, payload).pipe(
          Effect.catchTags({
            ValidationError: (error) => Effect.fail(ApiError.badRequest(error)),
            WebhookNotFound: (error) => Effect.fail(ApiError.notFound(error))
          })
        )
    }) satisfies Operations<"console">
)

export const ConsoleLive = serveGroup("console", consoleOperations)
