/**
 * Webhooks (contract §5): registration with per-event filters, the filter-field catalogue,
 * the delivery log, failure alerts, and `POST /events`, the embedding seam for publishing.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { FilterField } from "@waybill/filters/FilterField"
import { DeliveryLog } from "@waybill/webhooks/Delivery"
import { PublishEvent, Published } from "@waybill/webhooks/EventIntake"
import { FailureAlert } from "@waybill/webhooks/FailureAlerts"
import * as Page from "@waybill/webhooks/Page"
import { RegisterWebhook, WebhookResponse } from "@waybill/webhooks/Webhook"
import { AlertListParams, FilterFieldsParams, ListParams } from "@waybill/webhooks/WebhookService"
import * as Schema from "effect/Schema"
import { NotFound } from "./ApiError.js"
import { Authentication } from "./Authentication.js"
import { documentedUnknown } from "./internal/openApi.js"

const webhookId = HttpApiSchema.param("id", Schema.String)

/**
 * @since 0.1.0
 * @category groups
 */
export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("register", "/webhooks")
      .setPayload(documentedUnknown(RegisterWebhook, "RegisterWebhookRequest"))
      .addSuccess(WebhookResponse, { status: 201 })
      .annotate(
        OpenApi.Description,
        'Registers a webhook. Secrets are write-only: every response masks them as "********". There is no update: delete and re-create.'
      )
  )
  .add(HttpApiEndpoint.get("list", "/webhooks").setUrlParams(ListParams).addSuccess(Page.schema(WebhookResponse)))
  .add(
    HttpApiEndpoint.get("filterFields", "/webhooks/filter-fields")
      .setUrlParams(FilterFieldsParams)
      .addSuccess(Schema.Struct({ data: Schema.Array(FilterField) }))
      .annotate(OpenApi.Description, "The fields a filter may use for one event type, with their operators")
  )
  .add(HttpApiEndpoint.get("get")`/webhooks/${webhookId}`.addSuccess(WebhookResponse).addError(NotFound))
  .add(HttpApiEndpoint.del("delete")`/webhooks/${webhookId}`.addSuccess(HttpApiSchema.NoContent).addError(NotFound))
  .add(
    HttpApiEndpoint.get("deliveries")`/webhooks/${webhookId}/deliveries`
      .setUrlParams(ListParams)
      .addSuccess(Page.schema(DeliveryLog))
      .addError(NotFound)
      .annotate(OpenApi.Description, "The delivery log, newest first, with every attempt")
  )
  .add(
    HttpApiEndpoint.get("alerts", "/alerts")
      .setUrlParams(AlertListParams)
      .addSuccess(Page.schema(FailureAlert))
      .annotate(OpenApi.Description, "Deliveries that failed after their retry")
  )
  .add(
    HttpApiEndpoint.post("publish", "/events")
      .setPayload(documentedUnknown(PublishEvent, "PublishEventRequest"))
      .addSuccess(Published, { status: 202 })
      .annotate(
        OpenApi.Description,
        "Publishes an event: the payload is validated against the catalogue, redacted per its rules, and delivered like an event raised by the service."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Webhooks, deliveries, alerts and event publishing") {}
