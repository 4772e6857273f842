/**
 * The API's handlers and the layers that serve it: as a Node/HTTP server layer, or as a
 * Fetch-style web handler to mount inside another server.
 * @since 0.1.0
 */

import * as Etag from "@effect/platform/Etag"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpPlatform from "@effect/platform/HttpPlatform"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Scope from "effect/Scope"
import { type ApiRequirements, layerApiWith } from "./internal/apiLayer.js"
import * as DocsPage from "./internal/docsPage.js"
import {
  observe,
  requestMetricsDisabled as observeMetricsDisabled,
  requestSpans as observeRequestSpans,
  routeOf
} from "./internal/observe.js"

/**
 * What the API needs from the embedder: the ports behind the endpoints (`ApiKeys`,
 * `ReferenceData`, `DraftService`, `TourQuery`, `VehicleClassPolicy`, `WebhookService`,
 * `Dispatcher`, `EventOutbox`, `Transactor`).
 * @since 0.1.0
 */
export type Requirements = ApiRequirements

/**
 * The API with every handler, over its ports, behind the contract's request checks (contract
 * §1: a body method is authenticated before its body is read; bodies must be UTF-8 JSON of at
 * most 1 MiB, at most 64 levels deep, without `__proto__`, `constructor` or `prototype` keys,
 * non-finite numbers or text that cannot be stored). `POST /drafts` and `POST /events`, the
 * endpoints a host calls for every draft and event, are answered ahead of the HttpApi router, by
 * the same handlers with the same authentication and error bodies (docs/decisions.md,
 * Throughput). The checks are part of the API, so every way of serving it has them.
 * @since 0.1.0
 */
export const layerApi: Layer.Layer<HttpApi.Api, never, Requirements> = layerApiWith({ directRoutes: true })

// A query parameter's name as the request log writes it: letters, digits and `_.-~`, at most 40.
const LOGGABLE_NAME = /^[A-Za-z0-9_.~-]{1,40}$/

/**
 * A URL as the request log writes it: the path, then the names of the query's parameters
 * without their values (`/drafts?api_key=…&limit=5` → `/drafts?api_key&limit`). A parameter
 * without `=` (which may be a bare value) and a name of other characters or longer than 40 are
 * written `…`.
 * @since 0.1.0
 */
export const loggedUrl = (url: string): string => {
  const query = url.indexOf("?")
  if (query === -1) return url
  const names: Array<string> = []
  for (const pair of url.slice(query + 1).split("&")) {
    if (pair === "") continue
    const equals = pair.indexOf("=")
    const name = equals === -1 ? "" : pair.slice(0, equals)
    names.push(LOGGABLE_NAME.test(name) ? name : "…")
  }
  return names.length === 0 ? url.slice(0, query) : `${url.slice(0, query)}?${names.join("&")}`
}

/**
 * One INFO line per request, `GET /drafts?limit 200 3ms`, after the response is built: the query
 * string's parameter names only, never their values (`loggedUrl`). Turned off by the platform's
 * own switch (`HttpMiddleware.withLoggerDisabled`) or a log level above INFO.
 * @since 0.1.0
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
        return Effect.logInfo(
          `${request.method} ${loggedUrl(request.url)} ${status} ${Math.round(performance.now() - started)}ms`
        )
      })
    )
  })

/**
 * The middleware a server adds around the API: the request log, and what a request leaves for
 * operators (contract §8): `waybill_http_requests_total` and
 * `waybill_http_request_duration_seconds` by method, route template (`/drafts/{id}`, never the
 * raw path; `unmatched` for a path of no route) and status (off with `requestMetricsDisabled`),
 * and the trace of an incoming `traceparent` for the events the request records while no tracer
 * makes a request span. (The contract's request checks and error bodies are part of the API
 * itself, `layerApi`.)
 * @since 0.1.0
 */
export const middleware = <E, R>(app: HttpApp.Default<E, R>) => requestLog(observe(app))

/**
 * Switches request metrics off for the requests served by fibers that set it (the reference
 * server does, unless `WAYBILL_METRICS_TOKEN` is set): `Effect.locally(requestMetricsDisabled, true)`.
 * @since 0.1.0
 */
export const requestMetricsDisabled: FiberRef.FiberRef<boolean> = observeMetricsDisabled

/**
 * With it set (`Effect.locally(requestSpans, true)`) and a tracer on, `middleware` makes each
 * request's server span itself, `http.server <method>` in the trace of the request's
 * `traceparent`, with `http.request.method`, `http.route` (the template) and
 * `http.response.status_code`: set it together with
 * `HttpMiddleware.withTracerDisabledWhen(() => true)`, which turns off the platform's span and
 * its URL parsing and attribute per header (the reference server does, docs/decisions.md).
 * @since 0.1.0
 */
export const requestSpans: FiberRef.FiberRef<boolean> = observeRequestSpans

/**
 * The route template `middleware` labels a request path with, one of the API's endpoint paths
 * (`/drafts/{id}`) or `unmatched`.
 * @since 0.1.0
 */
export const routeTemplate: (url: string) => string = routeOf

// The API served as `HttpApiBuilder.serve` serves it (its app, on the `HttpServer` in context),
// except that requests run in a context of the platform's services alone. The platform runs each
// request in the context the server was started in, and a request copies it a few times (to add
// the request, the route, the workspace); the API's handlers took their ports when they were
// built, so the ports need not be in it. Five services instead of 39, those copies cost a request
// 5–15 µs less (docs/benchmarks.md, Throughput).
const serve = Layer.scopedDiscard(
  Effect.gen(function* () {
    const app = yield* HttpApiBuilder.httpApp
    const platform = Context.pick(
      HttpServer.HttpServer,
      HttpPlatform.HttpPlatform,
      Etag.Generator,
      FileSystem.FileSystem,
      Path.Path,
      Scope.Scope
    )(yield* Effect.context<HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices | Scope.Scope>())
    // Not `Effect.provide`, which would merge: the whole context is replaced.
    yield* Effect.mapInputContext(HttpServer.serveEffect(app, middleware), (_: Context.Context<never>) => platform)
  })
).pipe(Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]))

/**
 * Serves the API, `GET /openapi.json`, `GET /docs` and the routes `routes` adds to
 * `HttpApiBuilder.Router` (the operator console's `Console.layer()`, for example) on the
 * `HttpServer` in context. Routes must be added here, not beside: the server reads the router
 * once, when it is built. They pass the API's request checks too: a `POST`, `PUT` or `PATCH`
 * needs a valid API key before its body is read.
 * @since 0.1.0
 */
export const layerServerWith = <E, R>(
  routes: Layer.Layer<never, E, R>
): Layer.Layer<never, E, HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices | Requirements | R> =>
  serve.pipe(
    Layer.provide(routes),
    Layer.provide(DocsPage.layer("/docs")),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
    Layer.provide(layerApi),
    HttpServer.withLogAddress
  )

/**
 * Serves the API, `GET /openapi.json` and `GET /docs` on the `HttpServer` in context.
 * @since 0.1.0
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
 * @since 0.1.0
 */
export interface WebHandlerOptions {
  readonly basePath?: string | undefined
}

/**
 * The API whose OpenAPI document names `basePath` (normalised to `/prefix`, or `/`) as its
 * server.
 * @since 0.1.0
 */
export const layerApiAt = (basePath: string): Layer.Layer<HttpApi.Api, never, Requirements> => {
  const url = `/${basePath.replace(/^\/+|\/+$/g, "")}`
  return Layer.effect(
    HttpApi.Api,
    Effect.map(HttpApi.Api, ({ api, context }) => ({ api: api.annotate(OpenApi.Servers, [{ url }]), context }))
  ).pipe(Layer.provide(layerApi))
}

/**
 * A Fetch-style handler `(Request) => Promise<Response>` serving the same routes, with the same
 * request checks and error bodies, for mounting inside another server (Express through an
 * adapter such as `@hono/node-server`'s, which must pass repeated headers on; Hono directly).
 * Call `dispose` on shutdown.
 * @since 0.1.0
 */
export const toWebHandler = <E>(dependencies: Layer.Layer<Requirements, E>, options: WebHandlerOptions = {}) =>
  HttpApiBuilder.toWebHandler(
    Layer.mergeAll(
      DocsPage.layer("/docs"),
      HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
      HttpServer.layerContext
    ).pipe(
      Layer.provideMerge(options.basePath === undefined ? layerApi : layerApiAt(options.basePath)),
      Layer.provide(dependencies)
    ),
    { middleware: observe }
  )
