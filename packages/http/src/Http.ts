/**
 * The API's handlers and the layers that serve it: as a Node/HTTP server layer, or as a
 * Fetch-style web handler to mount inside another server.
 *
 * @since 0.1.0
 */

import * as Etag from "@effect/platform/Etag"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiScalar from "@effect/platform/HttpApiScalar"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpPlatform from "@effect/platform/HttpPlatform"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Path from "@effect/platform/Path"
import type { ApiKeys } from "@waybill/core/ApiKeys"
import type { Idempotency } from "@waybill/core/Idempotency"
import type { Transactor } from "@waybill/core/Transactor"
import type { DraftService } from "@waybill/drafts/DraftService"
import type { ReferenceData } from "@waybill/drafts/ReferenceData"
import type { EventOutbox } from "@waybill/events/EventOutbox"
import type { TourQuery } from "@waybill/recurring/TourQuery"
import type { VehicleClassPolicy } from "@waybill/recurring/VehicleClass"
import type { Dispatcher } from "@waybill/webhooks/Dispatcher"
import type { WebhookService } from "@waybill/webhooks/WebhookService"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Scope from "effect/Scope"
import { layerApiWith } from "./internal/apiLayer.js"
import { checkBodies } from "./internal/contractErrors.js"

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
  | Idempotency

/**
 * The API with every handler, over its ports. `POST /drafts` and `POST /events`, the endpoints a
 * host calls for every draft and event, are answered ahead of the HttpApi router, by the same
 * handlers with the same authentication and error bodies (docs/decisions.md, Throughput).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerApi: Layer.Layer<HttpApi.Api, never, Requirements> = layerApiWith({ directRoutes: true })

/**
 * One INFO line per request, `GET /drafts?limit=5 200 3ms`, after the response is built. Turned
 * off by the platform's own switch (`HttpMiddleware.withLoggerDisabled`) or a log level above
 * INFO. The query string is kept (it holds no secret; keys travel in headers only).
 *
 * @since 0.1.0
 * @category middleware
 */
export const requestLog = <E, R>(
  app: HttpApp.Default<E, R>
): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiberRuntime((fiber) => {
    // Decided once per request, before anything is measured or formatted: a log level above
    // INFO, or the platform's switch, costs the request nothing.
    if (
      fiber.getFiberRef(HttpMiddleware.loggerDisabled) ||
      LogLevel.greaterThan(fiber.getFiberRef(FiberRef.currentMinimumLogLevel), LogLevel.Info)
    ) {
      return app
    }
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const started = performance.now()
    return Effect.onExit(app, (exit) =>
      // The switch may also be set inside the app, for its own request.
      Effect.withFiberRuntime((after) => {
        if (after.getFiberRef(HttpMiddleware.loggerDisabled)) return Effect.void
        const status = Exit.isSuccess(exit) ? exit.value.status : "failed"
        return Effect.logInfo(`${request.method} ${request.url} ${status} ${Math.round(performance.now() - started)}ms`)
      })
    )
  })

/**
 * The middleware every deployment uses: the contract's error bodies and body limits, and a
 * log line per request.
 *
 * @since 0.1.0
 * @category middleware
 */
export const middleware = <E, R>(app: HttpApp.Default<E, R>) => requestLog(checkBodies(app))

// `HttpApiBuilder.serve`, except that requests run in a context of the platform's services alone.
// The platform runs each request in the context the server was started in, and a request copies
// it a few times (to add the request, the route, the workspace); the API's handlers took their
// ports when they were built, so the ports need not be in it. Five services instead of 39, those
// copies cost a request 5–15 µs less (docs/decisions.md, Throughput).
const serve = Layer.scopedDiscard(
  Effect.gen(function* () {
    const app = yield* HttpApiBuilder.httpApp
    const server = yield* HttpServer.HttpServer
    const platform = Context.pick(
      HttpPlatform.HttpPlatform,
      Etag.Generator,
      FileSystem.FileSystem,
      Path.Path,
      Scope.Scope
    )(yield* Effect.context<HttpRouter.HttpRouter.DefaultServices | Scope.Scope>())
    // Not `Effect.provide`, which would merge: the whole context is replaced.
    yield* Effect.mapInputContext(server.serve(app, middleware), (_: Context.Context<never>) => platform)
  })
).pipe(Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]))

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
  serve.pipe(
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
 * Where a web handler is mounted: `basePath` is the path prefix under which the host serves it
 * (`"/waybill"` for `app.use("/waybill", …)`), so that `/openapi.json` and `/docs` name it as
 * their `servers` entry and "try it" requests reach the API.
 *
 * @since 0.1.0
 * @category models
 */
export interface WebHandlerOptions {
  readonly basePath?: string | undefined
}

/**
 * The API whose OpenAPI document names `basePath` (normalised to `/prefix`, or `/`) as its
 * server.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerApiAt = (basePath: string): Layer.Layer<HttpApi.Api, never, Requirements> => {
  const url = `/${basePath.replace(/^\/+|\/+$/g, "")}`
  return Layer.effect(
    HttpApi.Api,
    Effect.map(HttpApi.Api, ({ api, context }) => ({ api: api.annotate(OpenApi.Servers, [{ url }]), context }))
  ).pipe(Layer.provide(layerApi))
}

/**
 * A Fetch-style handler `(Request) => Promise<Response>` serving the same routes, for mounting
 * inside another server. Call `dispose` on shutdown.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toWebHandler = <E>(dependencies: Layer.Layer<Requirements, E>, options: WebHandlerOptions = {}) =>
  HttpApiBuilder.toWebHandler(
    Layer.mergeAll(
      HttpApiScalar.layer({ path: "/docs" }),
      HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
      HttpServer.layerContext
    ).pipe(
      Layer.provideMerge(options.basePath === undefined ? layerApi : layerApiAt(options.basePath)),
      Layer.provide(dependencies)
    ),
    { middleware: checkBodies }
  )
