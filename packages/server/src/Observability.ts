/**
 * Metrics and traces for operators: `GET /metrics` behind `WAYBILL_METRICS_TOKEN`, the process
 * series, and the OTLP/HTTP trace exporter configured from the `OTEL_*` variables.
 * @since 0.1.0
 */
import { createHash, timingSafeEqual } from "node:crypto"
import { monitorEventLoopDelay } from "node:perf_hooks"
import type * as Resource from "@effect/opentelemetry/Resource"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Sampler } from "@opentelemetry/sdk-trace-base"
import * as Metrics from "@waybill/core/Metrics"
import * as PrometheusText from "@waybill/core/PrometheusText"
import * as EventType from "@waybill/events/EventType"
import { authorizationOf } from "@waybill/http/Authentication"
import * as PgMetrics from "@waybill/store-pg/PgMetrics"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { defaultTracingBatch, type TracingConfig, type TracingSampler } from "./Config.js"

const cpuSeconds = Metric.counter("process_cpu_seconds_total", {
  description: "User and system CPU time spent by the process, in seconds."
})
const residentMemory = Metric.gauge("process_resident_memory_bytes", {
  description: "Resident memory size of the process, in bytes."
})
const startTime = Metric.gauge("process_start_time_seconds", {
  description: "Start time of the process since the Unix epoch, in seconds."
})
const eventLoopLag = Metric.gauge("nodejs_eventloop_lag_seconds", {
  description: "Mean event-loop delay since the previous read, in seconds."
})
const eventLoopLagMax = Metric.gauge("nodejs_eventloop_lag_max_seconds", {
  description: "Largest event-loop delay since the previous read, in seconds."
})

// Read when metrics are read; the event-loop histogram (an unreferenced timer) starts at the first read.
let loopDelay: ReturnType<typeof monitorEventLoopDelay> | undefined
let cpuSoFar = 0
const readProcess = () => {
  if (loopDelay === undefined) {
    loopDelay = monitorEventLoopDelay({ resolution: 20 })
    loopDelay.enable()
  }
  const cpu = process.cpuUsage()
  const total = (cpu.user + cpu.system) / 1e6
  cpuSeconds.unsafeUpdate(Math.max(0, total - cpuSoFar), [])
  cpuSoFar = Math.max(cpuSoFar, total)
  residentMemory.unsafeUpdate(process.memoryUsage.rss(), [])
  startTime.unsafeUpdate(Math.floor((Date.now() - process.uptime() * 1000) / 1000), [])
  const mean = loopDelay.count > 0 ? loopDelay.mean / 1e9 : 0
  eventLoopLag.unsafeUpdate(Number.isFinite(mean) ? mean : 0, [])
  eventLoopLagMax.unsafeUpdate(loopDelay.count > 0 ? loopDelay.max / 1e9 : 0, [])
  loopDelay.reset()
}

/**
 * Makes the series with known labels exist at 0 (`Metrics.registerFixed`), and
 * `waybill_events_published_total` for each of the catalogue's event types, so that `rate()` sees
 * the first event of each.
 * @since 0.3.0
 */
export const registerFixed = (): void => {
  Metrics.registerFixed()
  for (const type of EventType.all) Metrics.recordPublished(type, 0)
}

/**
 * The metrics text now (Prometheus format 0.0.4): storage gauges, process series and every series
 * of Effect's registry.
 * @since 0.1.0
 */
export const metricsText: Effect.Effect<string, never, SqlClient.SqlClient> = Effect.zipRight(
  Effect.zipRight(
    PgMetrics.refresh(),
    Effect.sync(() => {
      registerFixed()
      readProcess()
    })
  ),
  PrometheusText.text
)

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest()

/** Whether an `Authorization` header is `Bearer <token>` (compared in constant time). @since 0.1.0 */
export const isMetricsBearer = (header: string | undefined, token: Redacted.Redacted<string>): boolean => {
  if (header === undefined || !/^bearer /i.test(header)) return false
  return timingSafeEqual(digest(header.slice(7).trim()), digest(Redacted.value(token)))
}

const unauthorized = HttpServerResponse.unsafeJson(
  {
    code: "unauthorized",
    message: "GET /metrics needs Authorization: Bearer <WAYBILL_METRICS_TOKEN>; API keys are not accepted here",
    issues: []
  },
  { status: 401, headers: { "www-authenticate": 'Bearer realm="metrics"' } }
)

/**
 * `GET /metrics` for `Http.layerServerWith`: the metrics text to `Authorization: Bearer <token>`
 * only, else 401. Not in `/openapi.json`.
 * @since 0.1.0
 */
export const layerMetricsRoute = (token: Redacted.Redacted<string>): Layer.Layer<never, never, SqlClient.SqlClient> =>
  Layer.unwrapEffect(
    Effect.map(SqlClient.SqlClient, (sql) => {
      registerFixed()
      const text = Effect.provideService(metricsText, SqlClient.SqlClient, sql)
      const handler = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        isMetricsBearer(authorizationOf(request), token)
          ? Effect.map(text, (body) => HttpServerResponse.text(body, { contentType: PrometheusText.contentType }))
          : Effect.succeed(unauthorized)
      )
      return HttpApiBuilder.Router.use((router) => router.get("/metrics", handler))
    })
  )

/**
 * Spans over OTLP/HTTP to `<endpoint>/v1/traces`, through a tracer and batches of ours and the
 * SDK's transport (docs/operations.md, Tracing). The SDK is loaded only here, when tracing is on.
 * @since 0.1.0
 */
export const layerTracing = (config: TracingConfig): Layer.Layer<Resource.Resource> =>
  Layer.unwrapEffect(
    Effect.promise(async () => {
      const [OtelResource, base, exporterBase, nodeHttp, ProcessorTracer, SpanBatches] = await Promise.all([
        import("@effect/opentelemetry/Resource"),
        import("@opentelemetry/sdk-trace-base"),
        import("@opentelemetry/otlp-exporter-base"),
        import("@opentelemetry/otlp-exporter-base/node-http"),
        import("./internal/processorTracer.js"),
        import("./internal/spanBatches.js")
      ])
      const statements = config.statements === true
      const sampler = config.sampler === undefined ? undefined : samplerOf(base, config.sampler, config.samplerRatio)
      const contentType = config.protocol === "http/json" ? "application/json" : "application/x-protobuf"
      const batches = (resource: { readonly attributes: Readonly<Record<string, unknown>> }) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            // Bodies are encoded already: the serializer passes them on.
            const transport = new exporterBase.OTLPExporterBase<{ readonly body: Uint8Array; readonly count: number }>(
              nodeHttp.createOtlpHttpExportDelegate(
                nodeHttp.convertLegacyHttpOptions({ url: `${config.endpoint}/v1/traces` }, "TRACES", "v1/traces", {
                  "Content-Type": contentType
                }),
                { serializeRequest: (request) => request.body, deserializeResponse: () => ({}) },
                "otlp_http_span_exporter",
                { name: "span", countItems: (request) => request.count },
                undefined
              )
            )
            const sender = { resource: resource.attributes, scope: { name: config.serviceName } }
            const send = (body: Uint8Array, count: number, done: (sent: boolean) => void) =>
              // 0: `ExportResultCode.SUCCESS`, whatever the transport retried before it.
              transport.export({ body, count }, (result) => done(result.code === 0))
            const settings = config.batch ?? defaultTracingBatch
            for (const result of Metrics.spanResults) Metrics.recordSpans(result, 0)
            const made = SpanBatches.make(
              config.protocol === "http/json" ? SpanBatches.json(sender) : SpanBatches.protobuf(sender),
              send,
              settings,
              Metrics.recordSpans
            )
            return { made, transport }
          }),
          // What is left is sent at shutdown, for at most 3 s; a collector that is down loses it.
          ({ made, transport }) =>
            Effect.tryPromise(() => made.close().then(() => transport.shutdown())).pipe(
              Effect.timeoutOption(3_000),
              Effect.ignore,
              Effect.interruptible
            )
        )
      const tracer = Layer.unwrapScoped(
        Effect.gen(function* () {
          const { made } = yield* batches(yield* OtelResource.Resource)
          return Layer.setTracer(
            ProcessorTracer.make({
              sink: made,
              sampler,
              // Not the background loops' statements: each poll would be a trace of its own.
              unrecorded: statements
                ? (name, parent) => name === "sql.execute" && Option.isNone(parent)
                : (name) => name.startsWith("sql.")
            })
          )
        })
      )
      return tracer.pipe(
        Layer.provideMerge(
          OtelResource.layerFromEnv(OtelResource.configToAttributes({ serviceName: config.serviceName }))
        )
      )
    })
  )

const samplerOf = (
  base: typeof import("@opentelemetry/sdk-trace-base"),
  name: TracingSampler,
  ratio: number | undefined
): Sampler => {
  const ratioSampler = () => new base.TraceIdRatioBasedSampler(ratio ?? 1)
  switch (name) {
    case "always_on":
      return new base.AlwaysOnSampler()
    case "always_off":
      return new base.AlwaysOffSampler()
    case "traceidratio":
      return ratioSampler()
    case "parentbased_always_on":
      return new base.ParentBasedSampler({ root: new base.AlwaysOnSampler() })
    case "parentbased_always_off":
      return new base.ParentBasedSampler({ root: new base.AlwaysOffSampler() })
    case "parentbased_traceidratio":
      return new base.ParentBasedSampler({ root: ratioSampler() })
  }
}
