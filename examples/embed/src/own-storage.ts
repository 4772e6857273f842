/**
 * Waybill over storage you provide: the API needs the services of `Http.Requirements`, built
 * over ports. Here every port is the in-memory layer of the package that declares it, except
 * the reference data, which comes from "your own tables", per workspace. Replace any other port
 * the same way: implement its interface, provide it as a layer.
 */
import * as ApiKeys from "@waybill/core/ApiKeys"
import * as ConsoleTokens from "@waybill/core/ConsoleTokens"
import * as Idempotency from "@waybill/core/Idempotency"
import * as Transactor from "@waybill/core/Transactor"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as DraftRepository from "@waybill/drafts/DraftRepository"
import * as DraftService from "@waybill/drafts/DraftService"
import * as ProductEvaluator from "@waybill/drafts/ProductEvaluator"
import { lookup, ReferenceData, type ReferenceDataSet } from "@waybill/drafts/ReferenceData"
import * as PropertyDefinition from "@waybill/events/PropertyDefinition"
import * as Http from "@waybill/http/Http"
import * as TourQuery from "@waybill/recurring/TourQuery"
import * as TourRepository from "@waybill/recurring/TourRepository"
import * as VehicleClass from "@waybill/recurring/VehicleClass"
import * as WebhookSender from "@waybill/sender/WebhookSender"
import * as Dispatcher from "@waybill/webhooks/Dispatcher"
import * as FailureAlerts from "@waybill/webhooks/FailureAlerts"
import * as MemoryDeliveryStore from "@waybill/webhooks/MemoryDeliveryStore"
import * as OutboxReader from "@waybill/webhooks/OutboxReader"
import * as SecretBox from "@waybill/webhooks/SecretBox"
import * as WebhookRepository from "@waybill/webhooks/WebhookRepository"
import * as WebhookService from "@waybill/webhooks/WebhookService"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

// "Your tables": each tenant has its own transport shapes, vehicle classes and products.
const tables: Record<string, ReferenceDataSet> = {
  acme: {
    transportShapes: [
      { id: "acme_line", name: "ACME line haul", outputs: ["tour"], recurring: { enabled: true }, requiredFields: [] }
    ],
    vehicleClasses: [{ id: "acme_truck", name: "ACME truck", maxWeightKg: 12000, rank: 1 }],
    products: [{ id: "acme_ftl", name: "ACME FTL" }]
  }
}
const empty: ReferenceDataSet = { transportShapes: [], vehicleClasses: [], products: [] }
const tableOf = (workspaceId: WorkspaceId) => tables[workspaceId] ?? empty

// A port is a Context.Tag; an implementation is a value of its interface, provided as a layer.
const referenceData = Layer.succeed(
  ReferenceData,
  ReferenceData.of({
    transportShapes: (workspaceId) => Effect.succeed(tableOf(workspaceId).transportShapes),
    vehicleClasses: (workspaceId) => Effect.succeed(tableOf(workspaceId).vehicleClasses),
    products: (workspaceId) => Effect.succeed(tableOf(workspaceId).products),
    product: (workspaceId, id) => Effect.succeed(lookup(tableOf(workspaceId).products)(id))
  })
)
const vehicleClassPolicy = Layer.succeed(
  VehicleClass.VehicleClassPolicy,
  VehicleClass.makeReference((workspaceId) => Effect.succeed(tableOf(workspaceId).vehicleClasses))
)

/**
 * Every service the API needs. One outbox and one transactor are shared by drafts and webhooks,
 * so a change and its events commit together.
 */
export const layer = (keys: Record<string, string>) =>
  Layer.mergeAll(
    ApiKeys.layer(
      Object.entries(keys).map(([workspace, key]) => ({
        workspaceId: Schema.decodeSync(WorkspaceId)(workspace),
        key: Redacted.make(key)
      }))
    ).pipe(Layer.provide(ApiKeys.layerStoreMemory)),
    ConsoleTokens.layer.pipe(Layer.provide(ConsoleTokens.layerStoreMemory)),
    DraftService.layer.pipe(
      Layer.provide(Layer.mergeAll(DraftRepository.layerMemory, ProductEvaluator.layerReference))
    ),
    TourQuery.layerMemory.pipe(Layer.provide(TourRepository.layerMemory)),
    vehicleClassPolicy,
    Layer.mergeAll(WebhookService.layer({ allowPrivateTargets: false }), Dispatcher.layer()).pipe(
      Layer.provide(
        Layer.mergeAll(
          WebhookRepository.layerMemory,
          MemoryDeliveryStore.layer,
          FailureAlerts.layerMemory,
          SecretBox.layerMemory,
          PropertyDefinition.layerFixed([]),
          // Real HTTP deliveries, with the SSRF checks at connect time.
          WebhookSender.layer({ allowPrivateTargets: false }),
          WebhookSender.layerResolver
        )
      )
    )
  ).pipe(
    Layer.provideMerge(
      Layer.mergeAll(referenceData, OutboxReader.layerMemory, Transactor.layerMemory, Idempotency.layerMemory)
    )
  )

/**
 * The API over these ports, as a Fetch-style handler to mount anywhere (see express.ts).
 */
export const make = (keys: Record<string, string>) => Http.toWebHandler(layer(keys))
