/** What a served request leaves for operators: request metrics, and its trace or span. */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Metrics from "@waybill/core/Metrics"
import * as TraceContext from "@waybill/core/TraceContext"
import * as Tracing from "@waybill/core/Tracing"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import type * as FiberStatus from "effect/FiberStatus"
import * as GlobalValue from "effect/GlobalValue"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { WaybillApi } from "../Api.js"

/** Whether `observe` makes the request's span itself (`Http.requestSpans`). */
export const requestSpans: FiberRef.FiberRef<boolean> = GlobalValue.globalValue(
  Symbol.for("@waybill/http/requestSpans"),
  () => FiberRef.unsafeMake(false)
)

/** Whether request metrics are off for the requests of this fiber. */
export const requestMetricsDisabled: FiberRef.FiberRef<boolean> = GlobalValue.globalValue(
  Symbol.for("@waybill/http/requestMetricsDisabled"),
  () => FiberRef.unsafeMake(false)
)

/** The paths served beside the API definition's: none of them takes an API key or console token. */
export const extraPaths = [
  "/openapi.json",
  "/docs",
  "/metrics",
  "/console",
  "/console/assets/app.js",
  "/console/assets/app.css"
]

interface Template {
  readonly template: string
  readonly segments: ReadonlyArray<string | undefined>
}

/**
 * The route template of a request path (`/drafts/drf_…/actions` → `/drafts/{id}/actions`), else
 * `unmatched`: a bounded set, so the series stay few whatever paths clients send.
 */
export const makeRouteOf = (paths: ReadonlyArray<string>): ((url: string) => string) => {
  const bySize = new Map<number, Array<Template>>()
  const exact = new Set<string>()
  for (const path of new Set(paths)) {
    if (!path.includes("/:")) exact.add(path)
    const parts = path.split("/")
    const template = parts.map((part) => (part.startsWith(":") ? `{${part.slice(1)}}` : part)).join("/")
    const list = bySize.get(parts.length) ?? []
    list.push({ template, segments: parts.map((part) => (part.startsWith(":") ? undefined : part)) })
    bySize.set(parts.length, list)
  }
  // Static templates first, or `/webhooks/stats` would be `/webhooks/{id}`.
  for (const list of bySize.values()) {
    list.sort(
      (a, b) => b.segments.filter((s) => s !== undefined).length - a.segments.filter((s) => s !== undefined).length
    )
  }
  return (url) => {
    const query = url.indexOf("?")
    const path = query === -1 ? url : url.slice(0, query)
    if (exact.has(path)) return path
    const parts = path.split("/")
    const candidates = bySize.get(parts.length)
    if (candidates !== undefined) {
      for (const candidate of candidates) {
        let matches = true
        for (let i = 0; i < parts.length && matches; i++) {
          const segment = candidate.segments[i]
          matches = segment === undefined ? parts[i] !== "" : segment === parts[i]
        }
        if (matches) return candidate.template
      }
    }
    return "unmatched"
  }
}

const apiPaths = (): Array<string> => {
  const paths: Array<string> = [...extraPaths]
  HttpApi.reflect(WaybillApi, { onGroup: () => {}, onEndpoint: ({ endpoint }) => paths.push(endpoint.path) })
  return paths
}

export const routeOf = makeRouteOf(apiPaths())

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

const statusOf = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>) =>
  Exit.isSuccess(exit) ? exit.value.status : 500

// From the header alone, so a refused token counts as a console-token request too.
const authOf = (header: string | undefined): Metrics.RequestAuth =>
  header === undefined ? "none" : header.startsWith("Bearer wbc_") ? "console-token" : "api-key"

const record = (request: HttpServerRequest.HttpServerRequest, route: string, started: number, status: number) =>
  Metrics.recordRequest(
    METHODS.has(request.method) ? request.method : "other",
    route,
    status,
    performance.now() - started,
    authOf(request.headers.authorization)
  )

// What a trace needs of the platform's span, without its URL parsing and attribute per header;
// its end records the metrics too.
const spanned = <E, R>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  running: FiberStatus.Running,
  request: HttpServerRequest.HttpServerRequest,
  route: string,
  app: HttpApp.Default<E, R>,
  metrics: boolean
): HttpApp.Default<E, R> => {
  const incoming = TraceContext.parse(request.headers.traceparent)
  const parent = Option.isSome(incoming)
    ? Option.some<Tracer.AnySpan>(TraceContext.externalSpan(incoming.value))
    : Context.getOption(fiber.currentContext, Tracer.ParentSpan)
  const started = metrics ? performance.now() : 0
  return Tracing.fiberSpan(
    fiber,
    running,
    { name: `http.server ${request.method}`, parent, kind: "server" },
    (span) => {
      span.attribute("http.request.method", request.method)
      span.attribute("http.route", route)
      return Effect.provideService(app, Tracer.ParentSpan, span)
    },
    (span, exit) => {
      const status = statusOf(exit)
      span.attribute("http.response.status_code", status)
      if (metrics) record(request, route, started, status)
    }
  )
}

/**
 * Records each request's metrics and continues its `traceparent`, or makes its span with
 * `requestSpans` and a tracer on. Each costs nothing when switched off.
 */
export const observe = <E, R>(
  app: HttpApp.Default<E, R>
): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiberRuntime((fiber, running) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const spans = fiber.getFiberRef(requestSpans) && fiber.getFiberRef(FiberRef.currentTracerEnabled)
    const metrics = !fiber.getFiberRef(requestMetricsDisabled)
    const route = spans || metrics ? routeOf(request.url) : ""
    if (spans) return spanned(fiber, running, request, route, app, metrics)
    const traced = TraceContext.withIncoming(request.headers.traceparent)(app)
    if (!metrics) return traced
    const started = performance.now()
    return Tracing.onExitSync(traced, running, (exit) => record(request, route, started, statusOf(exit)))
  })
