import { CurrentWorkspace } from "@waybill/core/Workspace"
import { WebhookService } from "@waybill/webhooks/WebhookService"
import * as Effect from "effect/Effect"
import * as ApiError from "../ApiError.js"
import { type Operations, serveGroup } from "./operations.js"

/** The console group's operations: editing a webhook in place, and who is signed in. */
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
        ),
      whoami: () =>
        Effect.map(CurrentWorkspace, ({ consoleToken }) =>
          consoleToken === undefined
            ? { auth: "api-key" as const, scope: "manage" as const, label: null, expiresAt: null }
            : { auth: "console-token" as const, ...consoleToken }
        )
    }) satisfies Operations<"console">
)

export const ConsoleLive = serveGroup("console", consoleOperations)
