/**
 * The API's ports in memory, for tests that serve it in-process: two workspaces with a key each,
 * the reference data of a recurring line, one outbox and one transactor shared by drafts and
 * webhooks, and a webhook sender that answers 200.
 */
import * as ApiKeys from "@waybill/core/ApiKeys"
import * as ConsoleTokens from "@waybill/core/ConsoleTokens"
import * as Idempotency from "@waybill/core/Idempotency"
import * as Transactor from "@waybill/core/Transactor"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as DraftService from "@waybill/drafts/DraftService"
import type { ReferenceDataSet } from "@waybill/drafts/ReferenceData"
import * as PropertyDefinition from "@waybill/events/PropertyDefinition"
import * as TourQuery from "@waybill/recurring/TourQuery"
import * as TourRepository from "@waybill/recurring/TourRepository"
import * as VehicleClass from "@waybill/recurring/VehicleClass"
import * as Dispatcher from "@waybill/webhooks/Dispatcher"
import * as FailureAlerts from "@waybill/webhooks/FailureAlerts"
import * as HostResolver from "@waybill/webhooks/HostResolver"
import * as HttpSender from "@waybill/webhooks/HttpSender"
import * as MemoryDeliveryStore from "@waybill/webhooks/MemoryDeliveryStore"
import * as OutboxReader from "@waybill/webhooks/OutboxReader"
import * as SecretBox from "@waybill/webhooks/SecretBox"
import * as WebhookRepository from "@waybill/webhooks/WebhookRepository"
import * as WebhookService from "@waybill/webhooks/WebhookService"
import { Effect, Layer, Redacted, Schema } from "effect"

export const referenceData: ReferenceDataSet = {
  transportShapes: [
    {
      id: "shape_line",
      name: "Line haul",
      outputs: ["tour"],
      recurring: { enabled: true },
      requiredFields: ["transport.tour.vehicleClass"]
    }
  ],
  vehicleClasses: [{ id: "vc_12t", name: "12 t rigid", maxWeightKg: 5000, rank: 1 }],
  products: [{ id: "prod_ftl", name: "FTL booking" }]
}

export const keyA = "client-test-key-workspace-a"
export const keyB = "client-test-key-workspace-b"

export const ports = Layer.mergeAll(
  ApiKeys.layer([
    { workspaceId: Schema.decodeSync(WorkspaceId)("ws-a"), key: Redacted.make(keyA) },
    { workspaceId: Schema.decodeSync(WorkspaceId)("ws-b"), key: Redacted.make(keyB) }
  ]).pipe(Layer.provide(ApiKeys.layerStoreMemory)),
  ConsoleTokens.layer.pipe(Layer.provide(ConsoleTokens.layerStoreMemory)),
  DraftService.layerMemory(referenceData),
  TourQuery.layerMemory.pipe(Layer.provide(TourRepository.layerMemory)),
  VehicleClass.layerFromList(referenceData.vehicleClasses),
  Layer.mergeAll(WebhookService.layer({ allowPrivateTargets: false }), Dispatcher.layer()).pipe(
    Layer.provide(
      Layer.mergeAll(
        WebhookRepository.layerMemory,
        MemoryDeliveryStore.layer,
        FailureAlerts.layerMemory,
        SecretBox.layerMemory,
        HostResolver.layerNone,
        PropertyDefinition.layerFixed([]),
        HttpSender.layerScripted(() => Effect.succeed({ statusCode: 200 }))
      )
    )
  )
).pipe(Layer.provideMerge(Layer.mergeAll(OutboxReader.layerMemory, Transactor.layerMemory, Idempotency.layerMemory)))

/** A recurring master of the reference data's line. */
export const master = {
  origin: "manual",
  status: "draft",
  name: "Line {{ weekday }}",
  transportShapeId: "shape_line",
  transport: {
    multiStopData: {
      stops: [
        { address: { city: "Hamburg" }, timeWindow: { from: "06:00", to: "08:00" } },
        { address: { city: "Berlin" }, timeWindow: { from: "13:00", to: "15:00" } }
      ]
    },
    tour: { vehicleClass: "vc_12t" }
  },
  recurringSchedule: { cronExpressions: ["0 6 * * 1-5"], timezone: "Europe/Berlin", leadTimeDays: 7 }
} as const
