import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { ValidationError } from "@waybill/core/ValidationError"
import type { CurrentWorkspace } from "@waybill/core/Workspace"
import { Dispatcher } from "@waybill/webhooks/Dispatcher"
import * as EventIntake from "@waybill/webhooks/EventIntake"
import type { DeliveryNotFound, DeliveryPending } from "@waybill/webhooks/Replay"
import { type WebhookNotFound, WebhookService } from "@waybill/webhooks/WebhookService"
import * as Effect from "effect/Effect"
import { WaybillApi } from "../Api.js"
import { BadRequest, Conflict, NotFound } from "../ApiError.js"

const badRequest = (error: ValidationError) =>
  Effect.fail(new BadRequest({ message: error.message, issues: error.issues }))
const notFound = (error: WebhookNotFound | DeliveryNotFound) =>
  Effect.fail(new NotFound({ message: error.message, issues: [] }))
const conflict = (error: DeliveryPending) =>
  Effect.fail(new Conflict({ code: "conflict", message: error.message, issues: [] }))

/**
 * `POST /events`: 202 with the recorded event's id, or 400 with every issue. The dispatcher is
 * hurried once the event is committed instead of waiting for its next poll; the answer is written
 * as it is (the success schema's encode would only give `{ id }` back).
 */
export const publishEvent =
  (
    publish: Effect.Effect.Success<typeof EventIntake.publisher>,
    dispatcher: Dispatcher["Type"]
  ): ((payload: unknown) => Effect.Effect<HttpServerResponse.HttpServerResponse, BadRequest, CurrentWorkspace>) =>
  (payload) =>
    publish(payload).pipe(
      Effect.tap(() => dispatcher.wake),
      Effect.map((event) => HttpServerResponse.unsafeJson({ id: event.id }, { status: 202 })),
      Effect.catchTag("ValidationError", badRequest)
    )

export const WebhooksLive = HttpApiBuilder.group(WaybillApi, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* WebhookService
    const dispatcher = yield* Dispatcher
    const publish = publishEvent(yield* EventIntake.publisher, dispatcher)
    return handlers
      .handle("register", ({ payload }) =>
        webhooks.register(payload).pipe(Effect.catchTag("ValidationError", badRequest))
      )
      .handle("list", ({ urlParams }) => webhooks.list(urlParams).pipe(Effect.catchTag("ValidationError", badRequest)))
      .handle("filterFields", ({ urlParams }) =>
        webhooks.filterFields(urlParams.event).pipe(
          Effect.map((data) => ({ data })),
          Effect.catchTag("ValidationError", badRequest)
        )
      )
      .handle("get", ({ path }) => webhooks.get(path.id).pipe(Effect.catchTag("WebhookNotFound", notFound)))
      .handle("delete", ({ path }) => webhooks.delete(path.id).pipe(Effect.catchTag("WebhookNotFound", notFound)))
      .handle("rotate", ({ path, payload }) =>
        webhooks
          .rotate(path.id, payload)
          .pipe(Effect.catchTags({ WebhookNotFound: notFound, ValidationError: badRequest }))
      )
      .handle("deliveries", ({ path, urlParams }) =>
        webhooks
          .deliveries(path.id, urlParams)
          .pipe(Effect.catchTags({ WebhookNotFound: notFound, ValidationError: badRequest }))
      )
      .handle("resend", ({ path }) =>
        webhooks.resend(path.id, path.deliveryId).pipe(
          // Due now: hurry this process's delivery loop instead of waiting for its next poll.
          Effect.tap(() => dispatcher.wakeDelivery),
          Effect.catchTags({ WebhookNotFound: notFound, DeliveryNotFound: notFound, DeliveryPending: conflict })
        )
      )
      .handle("replay", ({ path, payload }) =>
        webhooks.replay(path.id, payload).pipe(
          Effect.tap(() => dispatcher.wakeDelivery),
          Effect.catchTags({ WebhookNotFound: notFound, ValidationError: badRequest })
        )
      )
      .handle("alerts", ({ urlParams }) =>
        webhooks.alerts(urlParams).pipe(Effect.catchTag("ValidationError", badRequest))
      )
      .handle("publish", ({ payload }) => publish(payload))
  })
)
