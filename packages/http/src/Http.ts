/**
 * The API's handlers and the layers that serve it: as a Node/HTTP server layer, or as a
 * Fetch-style web handler to mount inside another server.
 *
 * @since 0.1.0
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiScalar from "@effect/platform/HttpApiScalar"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import type { ApiKeys } from "@waybill/core/ApiKeys"
import { Availability } from "@waybill/core/Availability"
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
import { WaybillApi } from "./Api.js"
import * as Authentication from "./Authentication.js"
import { ConsoleLive } from "./internal/consoleHttp.js"
import { checkBodies, describeFailures } from "./internal/contractErrors.js"
import { DraftsLive, ProductsLive } from "./internal/draftsHttp.js"
import { ReferenceDataLive } from "./internal/referenceDataHttp.js"
import { SystemLive } from "./internal/systemHttp.js"
import { ToursLive } from "./internal/toursHttp.js"
import { WebhooksLive } from "./internal/webhooksHttp.js"

// With storage that can be unreachable (an Availability layer), its outages are 503s, not 500s.
const DescribeFailuresLive = Layer.unwrapEffect(
  Effect.map(Effect.serviceOption(Availability), (availability) =>
    HttpApiBuilder.middleware(
      WaybillApi,
      describeFailures(Option.match(availability, { onNone: () => () => false, onSome: (port) => port.isOutage }))
    )
  )
)

/**
 * What the API needs from the embedder: the ports behind the endpoints.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements =
  | ApiKeys
  | ReferenceData
  | DraftService
  | TourQuery
  | VehicleClassPolicy
  | WebhookService
  | Dispatcher
  | EventOutbox
  | Transactor

/**
 * The API with every handler, over its ports.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerApi: Layer.Layer<HttpApi.Api, never, Requirements> = HttpApiBuilder.api(WaybillApi).pipe(
  Layer.provide([
    SystemLive,
    ReferenceDataLive,
    DraftsLive,
    ProductsLive,
    ToursLive,
    WebhooksLive,
    ConsoleLive,
    DescribeFailuresLive
  ]),
  Layer.provide(Authentication.layer)
)

/**
 * The middleware every deployment uses: the contract's error bodies and body limits, and a
 * log line per request.
 *
 * @since 0.1.0
 * @category middleware
 */
export const middleware = <E, R>(app: HttpApp.Default<E, R>) => HttpMiddleware.logger(checkBodies(app))

/**
 * Serves the API, `GET /openapi.json`, `GET /docs` and the routes `routes` adds to
 * `HttpApiBuilder.Router` (the operator console's `Console.layer()`, for example) on the
 * `HttpServer` in context. Routes must be added here, not beside: the server reads the router
 * once, when it is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerServerWith = <E, R>(
  routes: Layer.Layer<never, E, R>
): Layer.Layer<never, E, HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices | Requirements | R> =>
  HttpApiBuilder.serve(middleware).pipe(
    Layer.provide(routes),
    Layer.provide(HttpApiScalar.layer({ path: "/docs" })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
    Layer.provide(layerApi),
    HttpServer.withLogAddress
  )

/**
 * Serves the API, `GET /openapi.json` and `GET /docs` on the `HttpServer` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerServer: Layer.Layer<
  never,
  never,
  HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices | Requirements
> = layerServerWith(Layer.empty)

/**
 * A Fetch-style handler `(Request) => Promise<Response>` serving the same routes, for mounting
 * inside another server. Call `dispose` on shutdown.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toWebHandler = <E>(dependencies: Layer.Layer<Requirements, E>) =>
  HttpApiBuilder.toWebHandler(
    Layer.mergeAll(
      HttpApiScalar.layer({ path: "/docs" }),
      HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
      HttpServer.layerContext
    ).pipe(Layer.provideMerge(layerApi), Layer.provide(dependencies)),
    { middleware: checkBodies }
  )
