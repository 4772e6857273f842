import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Idempotency from "@waybill/core/Idempotency"
import type { Transactor } from "@waybill/core/Transactor"
import type { ValidationError } from "@waybill/core/ValidationError"
import type { CurrentWorkspace } from "@waybill/core/Workspace"
import * as EventIntake from "@waybill/events/EventIntake"
import type { EventOutbox } from "@waybill/events/EventOutbox"
import * as DeliveryStats from "@waybill/webhooks/DeliveryStats"
import { Dispatcher } from "@waybill/webhooks/Dispatcher"
import type { DeliveryNotFound, DeliveryPending } from "@waybill/webhooks/Replay"
import { type WebhookLimitReached, type WebhookNotFound, WebhookService } from "@waybill/webhooks/WebhookService"
import * as Effect from "effect/Effect"
import { BadRequest, Conflict, type IdempotencyKeyReused, NotFound } from "../ApiError.js"
import { encodedOnce } from "./encodedOnce.js"
import { answered } from "./idempotencyHttp.js"
import { type Operations, serveGroup } from "./operations.js"

const badRequest = (error: ValidationError) =>
  Effect.fail(new BadRequest({ message: error.message, issues: error.issues }))
const notFound = (error: WebhookNotFound | DeliveryNotFound) =>
  Effect.fail(new NotFound({ message: error.message, issues: [] }))
const conflict = (error: DeliveryPending | WebhookLimitReached) =>
  Effect.fail(new Conflict({ code: "conflict", message: error.message, issues: [] }))

/**
 * `POST /events`, the one handler of both entrances (the router's `publish` endpoint and the
 * direct route): 202 with the event's id, or 400 with every issue; with an `Idempotency-Key`, the
 * kept answer. An event recorded wakes this process's dispatcher; a replay records nothing.
 */
export const publishEvent: Effect.Effect<
  (
    payload: unknown,
    key: string | undefined
  ) => Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    BadRequest | IdempotencyKeyReused | Conflict,
    CurrentWorkspace
  >,
  never,
  EventOutbox | Transactor | Dispatcher | Idempotency.Idempotency
> = Effect.gen(function* () {
  const publish = yield* EventIntake.publisher
  const publishIdempotent = yield* EventIntake.idempotentPublisher
  const dispatcher = yield* Dispatcher
  const idempotency = yield* Idempotency.Idempotency
  return (payload, key) =>
    key === undefined
      ? publish(payload).pipe(
          Effect.tap(() => dispatcher.wake),
          // Written as it is: the success schema's encode would only give `{ id }` back.
          Effect.map((event) => HttpServerResponse.unsafeJson({ id: event.id }, { status: 202 })),
          Effect.catchTag("ValidationError", badRequest)
        )
      : publishIdempotent(payload, key).pipe(
          Effect.tap((outcome) => (outcome.replayed ? Effect.void : dispatcher.wake)),
          answered(idempotency)
        )
})

// Requests that join one read (decision 0132) get the same statistics: their answer is encoded
// once and shared (decision 0135).
const statsResponse = encodedOnce(DeliveryStats.DeliveryStats, (stats: DeliveryStats.DeliveryStats) => stats)

/** The webhooks group's operations. */
export const webhooksOperations = Effect.gen(function* () {
  const webhooks = yield* WebhookService
  const dispatcher = yield* Dispatcher
  const idempotency = yield* Idempotency.Idempotency
  const publish = yield* publishEvent
  return {
    register: ({ payload, idempotencyKey }) =>
      idempotencyKey === undefined
        ? webhooks
            .register(payload)
            .pipe(Effect.catchTags({ ValidationError: badRequest, WebhookLimitReached: conflict }))
        : webhooks
            .registerIdempotent(payload, idempotencyKey)
            .pipe(Effect.catchTag("WebhookLimitReached", conflict), answered(idempotency)),
    list: ({ urlParams }) => webhooks.list(urlParams).pipe(Effect.catchTag("ValidationError", badRequest)),
    filterFields: ({ urlParams }) =>
      webhooks.filterFields(urlParams.event).pipe(
        Effect.map((data) => ({ data })),
        Effect.catchTag("ValidationError", badRequest)
      ),
    get: ({ path }) => webhooks.get(path.id).pipe(Effect.catchTag("WebhookNotFound", notFound)),
    delete: ({ path }) => webhooks.delete(path.id).pipe(Effect.catchTag("WebhookNotFound", notFound)),
    rotate: ({ path, payload }) =>
      webhooks
        .rotate(path.id, payload)
        .pipe(Effect.catchTags({ WebhookNotFound: notFound, ValidationError: badRequest })),
    disable: ({ path }) => webhooks.disable(path.id).pipe(Effect.catchTag("WebhookNotFound", notFound)),
    enable: ({ path }) =>
      webhooks.enable(path.id).pipe(
        // Held deliveries are due now: hurry this process's delivery loop.
        Effect.tap(() => dispatcher.wakeDelivery),
        Effect.catchTag("WebhookNotFound", notFound)
      ),
    deliveries: ({ path, urlParams }) =>
      webhooks
        .deliveries(path.id, urlParams)
        .pipe(Effect.catchTags({ WebhookNotFound: notFound, ValidationError: badRequest })),
    resend: ({ path }) =>
      webhooks.resend(path.id, path.deliveryId).pipe(
        // Due now: hurry this process's delivery loop instead of waiting for its next poll.
        Effect.tap(() => dispatcher.wakeDelivery),
        Effect.catchTags({ WebhookNotFound: notFound, DeliveryNotFound: notFound, DeliveryPending: conflict })
      ),
    replay: ({ path, payload }) =>
      webhooks.replay(path.id, payload).pipe(
        Effect.tap(() => dispatcher.wakeDelivery),
        Effect.catchTags({ WebhookNotFound: notFound, ValidationError: badRequest })
      ),
    stats: ({ path, urlParams }) =>
      webhooks
        .stats(path.id, urlParams)
        .pipe(Effect.map(statsResponse), Effect.catchTags({ WebhookNotFound: notFound, ValidationError: badRequest })),
    alerts: ({ urlParams }) => webhooks.alerts(urlParams).pipe(Effect.catchTag("ValidationError", badRequest)),
    publish: ({ payload, idempotencyKey }) => publish(payload, idempotencyKey)
  } satisfies Operations<"webhooks">
})

export const WebhooksLive = serveGroup("webhooks", webhooksOperations)
