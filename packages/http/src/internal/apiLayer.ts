/**
 * The API layer's composition: every handler group, authentication, and the middleware around the
 * router.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Availability } from "@waybill/core/Availability"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { WaybillApi } from "../Api.js"
import type { BadRequest } from "../ApiError.js"
import * as Authentication from "../Authentication.js"
import type { Requirements } from "../Http.js"
import { ConsoleLive } from "./consoleHttp.js"
import { describeFailures } from "./contractErrors.js"
import * as DirectRoutes from "./directRoutes.js"
import { DraftsLive, ProductsLive } from "./draftsHttp.js"
import { ReferenceDataLive } from "./referenceDataHttp.js"
import { SystemLive } from "./systemHttp.js"
import { ToursLive } from "./toursHttp.js"
import { WebhooksLive } from "./webhooksHttp.js"

// Around the router: the direct routes, then the contract's failures; with storage that can be
// unreachable (an Availability layer), its outages are 503s, not 500s.
const apiMiddleware = (options: { readonly directRoutes: boolean }) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const availability = yield* Effect.serviceOption(Availability)
      const describe = describeFailures(
        Option.match(availability, { onNone: () => () => false, onSome: (port) => port.isOutage })
      )
      if (!options.directRoutes) return HttpApiBuilder.middleware(WaybillApi, describe)
      const direct = yield* DirectRoutes.make
      // The API encodes every group's errors, the Authentication middleware's `Unauthorized`
      // among them, but types a middleware of its own with the API-level errors only.
      return HttpApiBuilder.middleware(
        WaybillApi,
        (app) => describe(direct(app)) as HttpApp.Default<BadRequest, HttpServerRequest.HttpServerRequest>
      )
    })
  )

/**
 * The API with every handler, over its ports. `directRoutes` serves `POST /drafts` and
 * `POST /events` ahead of the router (`directRoutes.ts`); without them, every request takes the
 * router, which the tests use as the reference the direct routes must answer like.
 */
export const layerApiWith = (options: {
  readonly directRoutes: boolean
}): Layer.Layer<HttpApi.Api, never, Requirements> =>
  HttpApiBuilder.api(WaybillApi).pipe(
    Layer.provide([
      SystemLive,
      ReferenceDataLive,
      DraftsLive,
      ProductsLive,
      ToursLive,
      WebhooksLive,
      ConsoleLive,
      apiMiddleware(options)
    ]),
    Layer.provide(Authentication.layer)
  )
