/**
 * Webhooks: registration, the filter-field catalogue, the delivery log with resend and replay,
 * delivery statistics, failure alerts, and `POST /events` for publishing.
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { PublishEvent, Published } from "@waybill/events/EventIntake"
import { FilterField } from "@waybill/filters/FilterField"
import { DeliveryLog } from "@waybill/webhooks/Delivery"
import { DeliveryStats, StatsParams } from "@waybill/webhooks/DeliveryStats"
import { FailureAlert } from "@waybill/webhooks/FailureAlerts"
import * as Page from "@waybill/webhooks/Page"
import { Replayed, ReplayRequest } from "@waybill/webhooks/Replay"
import { RotateSecret } from "@waybill/webhooks/SecretRotation"
import { RegisterWebhook, WebhookResponse } from "@waybill/webhooks/Webhook"
import { AlertListParams, FilterFieldsParams, ListParams } from "@waybill/webhooks/WebhookService"
import * as Schema from "effect/Schema"
import { Conflict, NotFound } from "./ApiError.js"
import { Authentication } from "./Authentication.js"
import { idempotentPost, pagedList } from "./internal/endpoints.js"
import { documentedUnknown } from "./internal/openApi.js"

const webhookId = HttpApiSchema.param("id", Schema.String)
const deliveryId = HttpApiSchema.param("deliveryId", Schema.String)

/** The webhooks group. @since 0.1.0 */
export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    idempotentPost("register", "/webhooks", {
      payload: documentedUnknown(RegisterWebhook, "RegisterWebhookRequest"),
      success: WebhookResponse,
      status: 201,
      description:
        'Registers a webhook. Secrets are write-only: every response masks them as "********". There is no update: delete and re-create (the operator console edits in place). A workspace holds at most 100 webhooks by default (the reference server\'s WAYBILL_MAX_WEBHOOKS_PER_WORKSPACE): one more is 409 conflict.'
    })
  )
  .add(HttpApiEndpoint.get("list", "/webhooks").pipe(pagedList(ListParams, Page.schema(WebhookResponse))))
  .add(
    HttpApiEndpoint.get("filterFields", "/webhooks/filter-fields")
      .setUrlParams(FilterFieldsParams)
      .addSuccess(Schema.Struct({ data: Schema.Array(FilterField) }))
      .annotate(OpenApi.Description, "The fields a filter may use for one event type, with their operators")
  )
  .add(HttpApiEndpoint.get("get")`/webhooks/${webhookId}`.addSuccess(WebhookResponse).addError(NotFound))
  .add(HttpApiEndpoint.del("delete")`/webhooks/${webhookId}`.addSuccess(HttpApiSchema.NoContent).addError(NotFound))
  .add(
    HttpApiEndpoint.post("rotate")`/webhooks/${webhookId}/rotate`
      .setPayload(documentedUnknown(RotateSecret, "RotateSecretRequest"))
      .addSuccess(WebhookResponse)
      .addError(NotFound)
      .annotate(
        OpenApi.Description,
        "Rotates the webhook's secret: auth of the webhook's type (and scheme). hmac: every attempt from now on is signed with the new secret and, until overlapSeconds (default 86400, at most 604800) have passed, also with the previous one (X-Signature: <new>, <previous>; webhook-signature: v1,<new> v1,<previous>); auth.previousSecretExpiresAt shows until when. A rotation during an overlap drops the older previous secret; at the overlap's end the previous secret is deleted. basic and bearer: the new credentials replace the old at once (overlapSeconds above 0 is a 400). Another type or scheme is a 400 at its path (the console's edit changes those)."
      )
  )
  .add(
    HttpApiEndpoint.post("disable")`/webhooks/${webhookId}/disable`
      .addSuccess(WebhookResponse)
      .addError(NotFound)
      .annotate(
        OpenApi.Description,
        'Disables the webhook (idempotent; disabledReason "manual"): its matching events still get deliveries, with status held, and nothing is sent until it is enabled. Every process stops sending for it.'
      )
  )
  .add(
    HttpApiEndpoint.post("enable")`/webhooks/${webhookId}/enable`
      .addSuccess(WebhookResponse)
      .addError(NotFound)
      .annotate(
        OpenApi.Description,
        "Enables the webhook (idempotent): its held deliveries go back to pending and are sent in event order, each once with the usual cycle (one attempt, one retry), by whichever process claims them."
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries")`/webhooks/${webhookId}/deliveries`
      .pipe(
        pagedList(ListParams, Page.schema(DeliveryLog), {
          description: "The delivery log, newest first, with every attempt"
        })
      )
      .addError(NotFound)
  )
  .add(
    HttpApiEndpoint.post("resend")`/webhooks/${webhookId}/deliveries/${deliveryId}/resend`
      .addSuccess(DeliveryLog, { status: 202 })
      .addError(NotFound)
      .addError(Conflict)
      .annotate(
        OpenApi.Description,
        "Sends a delivery that succeeded or failed again: back to pending with a fresh attempt cycle (one attempt, one retry), to the webhook's current URL and auth, with the same X-Delivery-Id and body; X-Delivery-Attempt counts on. 409 conflict while it is pending."
      )
  )
  .add(
    HttpApiEndpoint.post("replay")`/webhooks/${webhookId}/replay`
      .setPayload(documentedUnknown(ReplayRequest, "ReplayDeliveriesRequest", { checkOnEncode: true }))
      .addSuccess(Replayed, { status: 202 })
      .addError(NotFound)
      .annotate(
        OpenApi.Description,
        "Resends, in event order, every delivery of the webhook whose event was created in [since, until) and whose status is failed (default) or, with status all, failed or succeeded; pending ones are left alone. since must lie within the retention (the reference server's WAYBILL_RETENTION, 30 days by default; no bound with 0) and until after since."
      )
  )
  .add(
    HttpApiEndpoint.get("stats")`/webhooks/${webhookId}/stats`
      .setUrlParams(StatsParams)
      .addSuccess(DeliveryStats)
      .addError(NotFound)
      .annotate(
        OpenApi.Description,
        "Delivery statistics of the webhook's deliveries whose events were recorded in the last hours hours (1 to 168, default 24): how many succeeded, failed, are pending and held; the latency (event recorded to the response that ended the delivery) p50 and p95 in milliseconds over the deliveries that ended, null when none did; and one bucket per hour of the window counted back from now, oldest first, empty hours included."
      )
  )
  .add(
    HttpApiEndpoint.get("alerts", "/alerts").pipe(
      pagedList(AlertListParams, Page.schema(FailureAlert), { description: "Deliveries that failed after their retry" })
    )
  )
  .add(
    idempotentPost("publish", "/events", {
      payload: documentedUnknown(PublishEvent, "PublishEventRequest"),
      success: Published,
      status: 202,
      description:
        "Publishes an event: the payload is validated against the catalogue, redacted per its rules, and delivered like an event raised by the service. Send an Idempotency-Key to make a retry safe: the same key and body record the event once."
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(OpenApi.Description, "Webhooks, deliveries, alerts and event publishing") {}
