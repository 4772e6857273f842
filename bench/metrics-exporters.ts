/**
 * The cost figure behind the choice of the metrics exporter
 * (docs/decisions/0086-metrics-effect-metric-own-serializer.md): the same series, recorded and
 * scraped three ways in one process. (1) Effect's `Metric` with
 * Waybill's own text serializer (`PrometheusText`); (2) Effect's `Metric` read by
 * `@effect/opentelemetry`'s metric producer into the OpenTelemetry Prometheus exporter; (3)
 * prom-client recording and serializing by itself. Run once by hand, not part of `npm run bench`:
 * `npx tsx bench/metrics-exporters.ts`.
 */
import * as OtelMetrics from "@effect/opentelemetry/Metrics"
import * as Resource from "@effect/opentelemetry/Resource"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import * as Metrics from "@waybill/core/Metrics"
import * as PrometheusText from "@waybill/core/PrometheusText"
import { Effect, Scope } from "effect"
import * as Prom from "prom-client"

const types = Array.from({ length: 60 }, (_, n) => `event-type-${n}`)
const routes = Array.from({ length: 30 }, (_, n) => `/route-${n}/{id}`)
const statuses = [200, 201, 404]
const RECORDS = 1_000_000
const SCRAPES = 200

const time = (label: string, runs: number, body: () => void) => {
  for (let i = 0; i < Math.min(runs, 1_000); i++) body()
  const start = process.hrtime.bigint()
  for (let i = 0; i < runs; i++) body()
  const perRun = Number(process.hrtime.bigint() - start) / runs
  console.log(
    `${label.padEnd(58)} ${perRun >= 1_000 ? `${(perRun / 1_000).toFixed(1)} µs` : `${perRun.toFixed(0)} ns`}`
  )
  return perRun
}

// The same records, one loop per recorder: an event, an attempt, a request.
const recordEffect = (i: number) => {
  Metrics.recordPublished(types[i % types.length]!)
  Metrics.recordAttempt("success", 12)
  Metrics.recordRequest("POST", routes[i % routes.length]!, statuses[i % 3]!, 3)
}

const promRegistry = new Prom.Registry()
const promEvents = new Prom.Counter({
  name: "waybill_events_published_total",
  help: "Events recorded.",
  labelNames: ["type"],
  registers: [promRegistry]
})
const promAttempts = new Prom.Counter({
  name: "waybill_delivery_attempts_total",
  help: "Attempts.",
  labelNames: ["result"],
  registers: [promRegistry]
})
const promAttemptDuration = new Prom.Histogram({
  name: "waybill_delivery_attempt_duration_seconds",
  help: "Attempt duration.",
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60],
  registers: [promRegistry]
})
const promRequests = new Prom.Counter({
  name: "waybill_http_requests_total",
  help: "Requests.",
  labelNames: ["method", "route", "status"],
  registers: [promRegistry]
})
const promRequestDuration = new Prom.Histogram({
  name: "waybill_http_request_duration_seconds",
  help: "Request duration.",
  labelNames: ["method", "route"],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60],
  registers: [promRegistry]
})
const recordProm = (i: number) => {
  promEvents.labels(types[i % types.length]!).inc()
  promAttempts.labels("success").inc()
  promAttemptDuration.observe(0.012)
  const route = routes[i % routes.length]!
  promRequests.labels("POST", route, String(statuses[i % 3]!)).inc()
  promRequestDuration.labels("POST", route).observe(0.003)
}

const main = async () => {
  console.log(`Node ${process.version}; ${RECORDS.toLocaleString()} records, ${SCRAPES} scrapes each`)
  let i = 0
  const effectRecord = time("record (event + attempt + request): Effect Metric", RECORDS, () => recordEffect(i++))
  i = 0
  const promRecord = time("record (event + attempt + request): prom-client", RECORDS, () => recordProm(i++))

  const ownText = Effect.runSync(PrometheusText.text)
  const own = time("scrape: Effect Metric → PrometheusText", SCRAPES, () => {
    Effect.runSync(PrometheusText.text)
  })

  const scope = Effect.runSync(Scope.make())
  const exporter = new PrometheusExporter({ preventServerStart: true })
  await Effect.runPromise(
    Effect.flatMap(
      OtelMetrics.makeProducer,
      (
        producer // The exporter's copy of @opentelemetry/sdk-metrics is its own: the same reader at run time.
      ) => OtelMetrics.registerProducer(producer, () => exporter as never)
    ).pipe(Effect.provide(Resource.layer({ serviceName: "bench" })), Scope.extend(scope))
  )
  const serializer = new PrometheusSerializer()
  const otelOnce = async () => serializer.serialize((await exporter.collect()).resourceMetrics)
  const otelText = await otelOnce()
  for (let n = 0; n < 20; n++) await otelOnce()
  const otelStart = process.hrtime.bigint()
  for (let n = 0; n < SCRAPES; n++) await otelOnce()
  const otel = Number(process.hrtime.bigint() - otelStart) / SCRAPES
  console.log(
    `${"scrape: Effect Metric → @effect/opentelemetry → OTel Prometheus".padEnd(58)} ${(otel / 1_000).toFixed(1)} µs`
  )

  const promText = await promRegistry.metrics()
  for (let n = 0; n < 20; n++) await promRegistry.metrics()
  const promStart = process.hrtime.bigint()
  for (let n = 0; n < SCRAPES; n++) await promRegistry.metrics()
  const prom = Number(process.hrtime.bigint() - promStart) / SCRAPES
  console.log(`${"scrape: prom-client registry.metrics()".padEnd(58)} ${(prom / 1_000).toFixed(1)} µs`)

  console.log(
    `text sizes: own ${ownText.length} B, OTel ${otelText.length} B, prom-client ${promText.length} B; ` +
      `scrape vs own: OTel ${(otel / own).toFixed(1)}×, prom-client ${(prom / own).toFixed(1)}×; ` +
      `record vs Effect: prom-client ${(promRecord / effectRecord).toFixed(2)}×`
  )
  await Effect.runPromise(Scope.close(scope, Effect.void as never))
}

main()
