/**
 * What a served request leaves for operators (contract §8): `waybill_http_requests_total` and
 * `waybill_http_request_duration_seconds` by method, route template (never the raw path) and
 * status; and, while no tracer makes a request span, the trace of the request's `traceparent`
 * header for what it records (`TraceContext.withIncoming`).
 */
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

/** Whether request metrics are off for the requests of this fiber (`Http.withRequestMetrics`). */
export const requestMetricsDisabled: FiberRef.FiberRef<boolean> = GlobalValue.globalValue(
  Symbol.for("@waybill/http/requestMetricsDisabled"),
  () => FiberRef.unsafeMake(false)
)

// Paths served beside the API's endpoints (the reference, the console's default mount, metrics).
const extraPaths = [
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
 * The route template of a request path (`/drafts/drf_…/actions` → `/drafts/{id}/actions`): one
 * of the API's endpoint paths (and the few served beside them), else `unmatched`. A bounded set,
 * so the series stay few whatever paths clients send.
 */
export const makeRouteOf = (paths: ReadonlyArray<string>): ((url: string) => string) => {
  const bySize = new Map<number, Array<Template>>()
  // Paths without parameters answer by one lookup (`/events`, `/health`: the busiest).
  const exact = new Set<string>()
  for (const path of new Set(paths)) {
    if (!path.includes("/:")) exact.add(path)
    const parts = path.split("/")
    const template = parts.map((part) => (part.startsWith(":") ? `{${part.slice(1)}}` : part)).join("/")
    const list = bySize.get(parts.length) ?? []
    list.push({ template, segments: parts.map((part) => (part.startsWith(":") ? undefined : part)) })
    bySize.set(parts.length, list)
  }
  // Static templates before parameterized ones of the same length (`/webhooks/stats` would
  // otherwise be `/webhooks/{id}`).
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

/** The route template of a request path, over the API's endpoints. */
export const routeOf = makeRouteOf(apiPaths())

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

const statusOf = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>) =>
  Exit.isSuccess(exit) ? exit.value.status : 500

// Records the request's method, route template, status and duration.
const record = (request: HttpServerRequest.HttpServerRequest, route: string, started: number, status: number) =>
  Metrics.recordRequest(
    METHODS.has(request.method) ? request.method : "other",
    route,
    status,
    performance.now() - started
  )

// The request's server span, `http.server <method>`, in the trace of its `traceparent`, with the
// method, the route template and the status: what the platform's span says that a trace needs,
// without its URL parsing and its attribute per request and response header. Made with the
// fiber's tracer itself (`Tracing.fiberSpan`, not `Effect.useSpan`); its end records the
// request's metrics too, when they are on (one `Tracing.onExitSync` for both).
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
 * Records each request's method, route template, status and duration, and continues an incoming
 * `traceparent` while no tracer makes a request span; with `requestSpans` and a tracer on, makes
 * that span. Each costs nothing when switched off (the metrics by `requestMetricsDisabled`; the
 * span by `requestSpans` or the tracer; the trace without the header).
 */
export const observe = <E, R>(
  app: HttpApp.Default<E, R>
): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiberRuntime((fiber, running) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const spans = fiber.getFiberRef(requestSpans) && fiber.getFiberRef(FiberRef.currentTracerEnabled)
    const metrics = !fiber.getFiberRef(requestMetricsDisabled)
    // The template is matched once, for the span and the metrics alike, and only if either wants it.
    const route = spans || metrics ? routeOf(request.url) : ""
    if (spans) return spanned(fiber, running, request, route, app, metrics)
    const traced = TraceContext.withIncoming(request.headers.traceparent)(app)
    if (!metrics) return traced
    const started = performance.now()
    return Tracing.onExitSync(traced, running, (exit) => record(request, route, started, statusOf(exit)))
  })
