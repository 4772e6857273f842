/** The API layer: every handler group, authentication, and the middleware around the router. */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type { ApiKeys } from "@waybill/core/ApiKeys"
import { Availability } from "@waybill/core/Availability"
import type { ConsoleTokens } from "@waybill/core/ConsoleTokens"
import type { Idempotency } from "@waybill/core/Idempotency"
import type { Transactor } from "@waybill/core/Transactor"
import type { DraftService } from "@waybill/drafts/DraftService"
import type { ReferenceData } from "@waybill/drafts/ReferenceData"
import type { EventOutbox } from "@waybill/events/EventOutbox"
import type { TourQuery } from "@waybill/recurring/TourQuery"
import type { VehicleClassPolicy } from "@waybill/recurring/VehicleClass"
import type { Dispatcher } from "@waybill/webhooks/Dispatcher"
import type { WebhookService } from "@waybill/webhooks/WebhookService"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { WaybillApi } from "../Api.js"
import type { BadRequest } from "../ApiError.js"
import * as Authentication from "../Authentication.js"
import { ConsoleLive } from "./consoleHttp.js"
import { ConsoleTokensLive } from "./consoleTokensHttp.js"
import { describeFailures } from "./contractErrors.js"
import * as DirectRoutes from "./directRoutes.js"
import { DraftsLive, ProductsLive } from "./draftsHttp.js"
import { ReferenceDataLive } from "./referenceDataHttp.js"
import * as RequestChecks from "./requestChecks.js"
import { SystemLive } from "./systemHttp.js"
import { ToursLive } from "./toursHttp.js"
import { WebhooksLive } from "./webhooksHttp.js"

/** The ports behind the endpoints (`Http.Requirements`). */
export type ApiRequirements =
  | ApiKeys
  | ConsoleTokens
  | ReferenceData
  | DraftService
  | TourQuery
  | VehicleClassPolicy
  | WebhookService
  | Dispatcher
  | EventOutbox
  | Transactor
  | Idempotency

// Outermost first: the contract's failures (an `Availability` port makes outages 503s), then the
// request checks, which answer the direct routes.
const apiMiddleware = (options: { readonly directRoutes: boolean }) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const availability = yield* Effect.serviceOption(Availability)
      const describe = describeFailures(
        Option.match(availability, { onNone: () => () => false, onSome: (port) => port.isOutage })
      )
      const checks = yield* RequestChecks.make(options.directRoutes ? yield* DirectRoutes.make : () => undefined)
      // The API encodes every group's errors but types its middleware with the API-level ones only.
      return HttpApiBuilder.middleware(
        WaybillApi,
        (app) => describe(checks(app)) as HttpApp.Default<BadRequest, HttpServerRequest.HttpServerRequest>
      )
    })
  )

/**
 * The API with every handler. Without `directRoutes` every request takes the router: the tests'
 * reference the direct routes must answer like.
 */
export const layerApiWith = (options: {
  readonly directRoutes: boolean
}): Layer.Layer<HttpApi.Api, never, ApiRequirements> =>
  HttpApiBuilder.api(WaybillApi).pipe(
    Layer.provide([
      SystemLive,
      ReferenceDataLive,
      DraftsLive,
      ProductsLive,
      ToursLive,
      WebhooksLive,
      ConsoleLive,
      ConsoleTokensLive,
      apiMiddleware(options)
    ]),
    Layer.provide(Authentication.layer)
  )
