/** The API's handlers and the layers that serve it: a server layer, or a Fetch-style web handler. @since 0.1.0 */

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
import { mountPath } from "./internal/operations.js"

/** What the API needs from the embedder: the ports behind the endpoints. @since 0.1.0 */
export type Requirements = ApiRequirements

/**
 * The API with every handler, behind the request checks (docs/security.md, Requests). `POST /drafts`
 * and `POST /events` are answered ahead of the HttpApi router (docs/decisions/0103).
 * @since 0.1.0
 */
export const layerApi: Layer.Layer<HttpApi.Api, never, Requirements> = layerApiWith({ directRoutes: true })

const LOGGABLE_NAME = /^[A-Za-z0-9_.~-]{1,40}$/

/**
 * A URL as the request log writes it: the query's parameter names without their values
 * (`/drafts?api_key=…&limit=5` → `/drafts?api_key&limit`); a bare value or an odd name is `…`.
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

// Probes and scrapes come every few seconds and say nothing new: logged at DEBUG only.
const probeRoutes: ReadonlySet<string> = new Set(["/health", "/health/ready", "/metrics"])

// A caller's `X-Request-Id` of this shape is kept, so its own log and ours share the id.
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/

const requestIdOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const given = request.headers["x-request-id"]
  return given !== undefined && REQUEST_ID.test(given) ? given : globalThis.crypto.randomUUID()
}

/**
 * One line per request, `GET /drafts?limit 200 3ms` (`loggedUrl`), with the fields `method`,
 * `route` (the template), `status`, `durationMs` and `requestId`, which every record logged while
 * the request runs carries too. At INFO, but `/health`, `/health/ready` and `/metrics` at DEBUG;
 * off below the minimum level or with `HttpMiddleware.withLoggerDisabled`.
 * @since 0.1.0
 */
export const requestLog = <E, R>(
  app: HttpApp.Default<E, R>
): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiberRuntime((fiber) => {
    // Decided before anything is measured, so a disabled log costs the request nothing.
    const minimum = fiber.getFiberRef(FiberRef.currentMinimumLogLevel)
    if (fiber.getFiberRef(HttpMiddleware.loggerDisabled) || LogLevel.greaterThan(minimum, LogLevel.Info)) return app
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const route = routeOf(request.url)
    const level = probeRoutes.has(route) ? LogLevel.Debug : LogLevel.Info
    if (LogLevel.greaterThan(minimum, level)) return app
    const requestId = requestIdOf(request)
    const started = performance.now()
    return Effect.onExit(Effect.annotateLogs(app, "requestId", requestId), (exit) =>
      // The switch may also be set inside the app, for its own request.
      Effect.withFiberRuntime((after) => {
        if (after.getFiberRef(HttpMiddleware.loggerDisabled)) return Effect.void
        const status = Exit.isSuccess(exit) ? exit.value.status : "failed"
        const durationMs = Math.round(performance.now() - started)
        return Effect.logWithLevel(level, `${request.method} ${loggedUrl(request.url)} ${status} ${durationMs}ms`).pipe(
          Effect.annotateLogs({ method: request.method, route, status, durationMs, requestId })
        )
      })
    )
  })

/** The middleware a server adds around the API: the request log, request metrics and tracing. @since 0.1.0 */
export const middleware = <E, R>(app: HttpApp.Default<E, R>) => requestLog(observe(app))

/** Switches request metrics off for the requests served by fibers that set it to `true`. @since 0.1.0 */
export const requestMetricsDisabled: FiberRef.FiberRef<boolean> = observeMetricsDisabled

/**
 * With it `true` and a tracer on, `middleware` makes each request's `http.server <method>` span
 * itself: set it together with `HttpMiddleware.withTracerDisabledWhen(() => true)`.
 * @since 0.1.0
 */
export const requestSpans: FiberRef.FiberRef<boolean> = observeRequestSpans

/** The route template `middleware` labels a request path with (`/drafts/{id}`, or `unmatched`). @since 0.1.0 */
export const routeTemplate: (url: string) => string = routeOf

// `HttpApiBuilder.serve`, but requests run in a context of the platform's services alone, cheaper
// to copy per request: the handlers took their ports when built (docs/decisions/0050).
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
 * Serves the API, `/openapi.json`, `/docs` and the routes `routes` adds to `HttpApiBuilder.Router`
 * (e.g. `Console.layer()`): add routes here, not beside, as the router is read once.
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

/** Serves the API, `GET /openapi.json` and `GET /docs` on the `HttpServer` in context. @since 0.1.0 */
export const layerServer: Layer.Layer<
  never,
  never,
  HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices | Requirements
> = layerServerWith(Layer.empty)

/** Where a web handler is mounted: `basePath` (`"/waybill"`) becomes the OpenAPI document's server. @since 0.1.0 */
export interface WebHandlerOptions {
  readonly basePath?: string | undefined
}

const normalisedPath = (basePath: string) => `/${basePath.replace(/^\/+|\/+$/g, "")}`

/** The API whose OpenAPI document names `basePath` (normalised to `/prefix`) as its server. @since 0.1.0 */
export const layerApiAt = (basePath: string): Layer.Layer<HttpApi.Api, never, Requirements> => {
  const url = normalisedPath(basePath)
  return Layer.effect(
    HttpApi.Api,
    Effect.map(HttpApi.Api, ({ api, context }) => ({ api: api.annotate(OpenApi.Servers, [{ url }]), context }))
  ).pipe(Layer.provide(layerApi))
}

// Links in answers (a console token's `url`) name the path the host mounts the API at.
const observeAt = (basePath: string | undefined) => {
  if (basePath === undefined) return observe
  const mounted = normalisedPath(basePath)
  const path = mounted === "/" ? "" : mounted
  return <E, R>(app: HttpApp.Default<E, R>) => observe(Effect.locally(app, mountPath, path))
}

/** A Fetch-style handler serving the same routes inside another server; call `dispose` on shutdown. @since 0.1.0 */
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
    { middleware: observeAt(options.basePath) }
  )
