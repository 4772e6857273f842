/**
 * Waybill's metric series, declared with Effect's `Metric`; the exporter is the host's choice. No label
 * carries a secret, URL, key, workspace id or payload value, and each label set is bounded (`other`
 * past the bound). The recorders are synchronous.
 * @since 0.1.0
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricHook from "effect/MetricHook"
import * as MetricKey from "effect/MetricKey"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"

/** How an attempt ended, as `waybill_delivery_attempts_total` labels it. @since 0.1.0 */
export type AttemptResult = "success" | "http" | "timeout" | "connect" | "dns" | "tls" | "ssrf"

/** Every `result` label value of `waybill_delivery_attempts_total`. @since 0.1.0 */
export const attemptResults: ReadonlyArray<AttemptResult> = [
  "success",
  "http",
  "timeout",
  "connect",
  "dns",
  "tls",
  "ssrf"
]

/**
 * What became of a span handed to the trace exporter: exported, failed (its request failed or could
 * not be encoded) or dropped (queue full).
 * @since 0.1.0
 */
export type SpanResult = "exported" | "failed" | "dropped"

/** Every `result` label value of `waybill_trace_spans_total`. @since 0.1.0 */
export const spanResults: ReadonlyArray<SpanResult> = ["exported", "failed", "dropped"]

const eventsHelp = "Events recorded (published or raised by the service), by event type."
const requestsHelp =
  "HTTP requests answered, by method, route template, status and credential (api-key, console-token or none)."
const durationHelp = "Time to answer an HTTP request, by method and route template."

const seconds = MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60])
const latencySeconds = MetricBoundaries.fromIterable([
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600
])

const eventsKey = MetricKey.counter("waybill_events_published_total", {
  description: eventsHelp,
  incremental: true
})

/** `waybill_events_published_total{type}`: events recorded by this process. @since 0.1.0 */
export const eventsPublished = Metric.fromMetricKey(eventsKey)

const deliveriesKey = MetricKey.counter("waybill_deliveries_total", {
  description: "Deliveries ended by this process: succeeded, or failed after their retry.",
  incremental: true
})

/** `waybill_deliveries_total{status}`: deliveries that ended, `succeeded` or `failed`. @since 0.1.0 */
export const deliveries = Metric.fromMetricKey(deliveriesKey)

const attemptsKey = MetricKey.counter("waybill_delivery_attempts_total", {
  description: "Delivery attempts made, by result: success, or how the attempt failed.",
  incremental: true
})

/** `waybill_delivery_attempts_total{result}`. @since 0.1.0 */
export const attempts = Metric.fromMetricKey(attemptsKey)

const attemptDurationKey = MetricKey.histogram(
  "waybill_delivery_attempt_duration_seconds",
  seconds,
  "Duration of one delivery attempt, from the request to the response or the failure."
)

/** `waybill_delivery_attempt_duration_seconds`: one attempt, request to response (or failure). @since 0.1.0 */
export const attemptDuration = Metric.fromMetricKey(attemptDurationKey)

const deliveryLatencyKey = MetricKey.histogram(
  "waybill_delivery_latency_seconds",
  latencySeconds,
  "From the event being recorded to the response of the attempt that ended its delivery."
)

/** `waybill_delivery_latency_seconds`: event recorded → the response that ended the delivery. @since 0.1.0 */
export const deliveryLatency = Metric.fromMetricKey(deliveryLatencyKey)

/** `waybill_deliveries_pending`: pending and held deliveries in the whole database, set when read. @since 0.1.0 */
export const deliveriesPending = Metric.gauge("waybill_deliveries_pending", {
  description: "Deliveries pending or held, in the whole database."
})

/** `waybill_outbox_lag_seconds`: age of the oldest event not yet fanned out, 0 when none. @since 0.1.0 */
export const outboxLag = Metric.gauge("waybill_outbox_lag_seconds", {
  description: "Age of the oldest event not yet fanned out into deliveries; 0 when none waits."
})

/** `waybill_database_up`: 1 when the database answered the last check, else 0. @since 0.1.0 */
export const databaseUp = Metric.gauge("waybill_database_up", {
  description: "1 when the database answered the last check, 0 when it did not."
})

/** `waybill_tours_generated_total`: tours the generator stored. @since 0.1.0 */
export const toursGenerated = Metric.counter("waybill_tours_generated_total", {
  description: "Tours generated from recurring masters and stored.",
  incremental: true
})

const requestsKey = MetricKey.counter("waybill_http_requests_total", {
  description: requestsHelp,
  incremental: true
})

/** `waybill_http_requests_total{method,route,status,auth}`. @since 0.1.0 */
export const httpRequests = Metric.fromMetricKey(requestsKey)

const durationKey = MetricKey.histogram("waybill_http_request_duration_seconds", seconds, durationHelp)

/** `waybill_http_request_duration_seconds{method,route}`. @since 0.1.0 */
export const httpRequestDuration = Metric.fromMetricKey(durationKey)

const retentionRemovedKey = MetricKey.counter("waybill_retention_removed_total", {
  description: "Rows removed past the retention by this process, by kind.",
  incremental: true
})

/** What retention removes, as `waybill_retention_removed_total` labels it. @since 0.1.0 */
export type RemovedKind = "events" | "deliveries" | "attempts" | "alerts" | "idempotency"

/** Every `kind` label value of `waybill_retention_removed_total`. @since 0.1.0 */
export const removedKinds: ReadonlyArray<RemovedKind> = ["events", "deliveries", "attempts", "alerts", "idempotency"]

/** `waybill_retention_removed_total{kind}`. @since 0.1.0 */
export const retentionRemoved = Metric.fromMetricKey(retentionRemovedKey)

/** `waybill_oldest_event_age_seconds`: age of the oldest event kept, 0 when none, set when read. @since 0.1.0 */
export const oldestEventAge = Metric.gauge("waybill_oldest_event_age_seconds", {
  description: "Age of the oldest event kept in storage; 0 when none."
})

const traceSpansKey = MetricKey.counter("waybill_trace_spans_total", {
  description: "Spans handed to the trace exporter: exported, failed (their request failed) or dropped (queue full).",
  incremental: true
})

/** `waybill_trace_spans_total{result}`: spans handed to the trace exporter, by what became of them. @since 0.1.0 */
export const traceSpans = Metric.fromMetricKey(traceSpansKey)

/** Every family declared here, for exporters that describe a family before it has a series. @since 0.1.0 */
export const families: ReadonlyArray<{
  readonly name: string
  readonly help: string
  readonly type: "counter" | "gauge" | "histogram"
}> = [
  { name: "waybill_events_published_total", help: eventsHelp, type: "counter" },
  { name: "waybill_http_requests_total", help: requestsHelp, type: "counter" },
  { name: "waybill_http_request_duration_seconds", help: durationHelp, type: "histogram" }
]

type Recorder = (value: number) => void

// One registry hook kept per label set (a tagged `Metric` would look its key up on every update);
// past `bound` label sets, one series with every label `other`.
const taggedBy = <Type extends MetricKeyType.MetricKeyType<number, unknown>>(
  key: MetricKey.MetricKey<Type>,
  bound: number
) => {
  const made = new Map<string, Recorder>()
  let other: Recorder | undefined
  const make = (tags: ReadonlyArray<readonly [string, string]>): Recorder => {
    const hook = Metric.globalMetricRegistry.get(
      MetricKey.taggedWithLabels(
        key,
        tags.map(([name, value]) => MetricLabel.make(name, value))
      )
    )
    return (value) => (hook as MetricHook.MetricHook<number, unknown>).update(value)
  }
  return (id: string, tags: () => ReadonlyArray<readonly [string, string]>): Recorder => {
    const recorder = made.get(id)
    if (recorder !== undefined) return recorder
    if (made.size >= bound) {
      other ??= make(tags().map(([name]) => [name, "other"] as const))
      return other
    }
    const fresh = make(tags())
    made.set(id, fresh)
    return fresh
  }
}

// Kept for the same reason: `unsafeUpdate` would look the hook up on every update.
const untagged = <Type extends MetricKeyType.MetricKeyType<number, unknown>>(key: MetricKey.MetricKey<Type>) => {
  const hook = Metric.globalMetricRegistry.get(key) as MetricHook.MetricHook<number, unknown>
  return (value: number) => hook.update(value)
}

const byType = taggedBy(eventsKey, 256)
const byStatus = taggedBy(deliveriesKey, 8)
const byResult = taggedBy(attemptsKey, 16)
const bySpanResult = taggedBy(traceSpansKey, 4)
const byRemovedKind = taggedBy(retentionRemovedKey, 8)
const requestsBy = taggedBy(requestsKey, 2048)
const durationBy = taggedBy(durationKey, 512)
const attemptDurationOf = untagged(attemptDurationKey)
const deliveryLatencyOf = untagged(deliveryLatencyKey)

/** Counts `count` recorded events of `type`. @since 0.1.0 */
export const recordPublished = (type: string, count = 1): void => byType(type, () => [["type", type]])(count)

/** Counts one attempt: its result and duration in milliseconds. @since 0.1.0 */
export const recordAttempt = (result: AttemptResult, durationMs: number): void => {
  byResult(result, () => [["result", result]])(1)
  attemptDurationOf(durationMs / 1000)
}

/**
 * Counts one delivery that ended, and its latency in milliseconds since the event (`undefined`: unknown).
 * @since 0.1.0
 */
export const recordDelivery = (status: "succeeded" | "failed", latencyMs: number | undefined): void => {
  byStatus(status, () => [["status", status]])(1)
  if (latencyMs !== undefined) deliveryLatencyOf(Math.max(0, latencyMs) / 1000)
}

/** Counts `count` deliveries that expired undelivered (retention). @since 0.1.0 */
export const recordExpired = (count: number): void => byStatus("expired", () => [["status", "expired"]])(count)

/** Counts `count` rows of `kind` removed past the retention. @since 0.1.0 */
export const recordRemoved = (kind: RemovedKind, count: number): void =>
  byRemovedKind(kind, () => [["kind", kind]])(count)

/** Counts `count` spans the trace exporter is done with, by `result` (0 makes the series exist). @since 0.1.0 */
export const recordSpans = (result: SpanResult, count: number): void =>
  bySpanResult(result, () => [["result", result]])(count)

/** Counts `count` generated tours. @since 0.1.0 */
export const recordTours = (count: number): void => {
  if (count > 0) toursGenerated.unsafeUpdate(count, [])
}

/**
 * The credential a request came with, as `waybill_http_requests_total` labels it: a console token
 * (`Bearer wbc_…`), any other bearer credential, or none. Read from the header, accepted or not.
 * @since 0.3.0
 */
export type RequestAuth = "api-key" | "console-token" | "none"

/**
 * Counts one answered request: method, route template (never a raw path), status, duration in ms,
 * and the kind of credential it came with.
 * @since 0.1.0
 */
export const recordRequest = (
  method: string,
  route: string,
  status: number,
  durationMs: number,
  auth: RequestAuth = "none"
): void => {
  const key = `${method} ${route}`
  requestsBy(`${key} ${status} ${auth}`, () => [
    ["method", method],
    ["route", route],
    ["status", String(status)],
    ["auth", auth]
  ])(1)
  durationBy(key, () => [
    ["method", method],
    ["route", route]
  ])(durationMs / 1000)
}

/** Sets the storage gauges: up, and when up the pending deliveries, the outbox lag and the oldest event's age in seconds. @since 0.1.0 */
export const recordStorage = (
  state:
    | { readonly up: false }
    | {
        readonly up: true
        readonly pending: number
        readonly lagSeconds: number
        readonly oldestEventAgeSeconds: number
      }
): void => {
  databaseUp.unsafeUpdate(state.up ? 1 : 0, [])
  if (state.up) {
    deliveriesPending.unsafeUpdate(state.pending, [])
    outboxLag.unsafeUpdate(state.lagSeconds, [])
    oldestEventAge.unsafeUpdate(state.oldestEventAgeSeconds, [])
  }
}

/**
 * Makes the series with fixed labels exist at zero, so that a scraper sees them from the start
 * (an `increase` over a series that appears only at its first event misses that event).
 * @since 0.1.0
 */
export const registerFixed = (): void => {
  for (const status of ["succeeded", "failed", "expired"] as const) byStatus(status, () => [["status", status]])(0)
  for (const kind of removedKinds) recordRemoved(kind, 0)
  for (const result of attemptResults) byResult(result, () => [["result", result]])(0)
  toursGenerated.unsafeUpdate(0, [])
  attemptDuration.unsafeValue([])
  deliveryLatency.unsafeValue([])
}
