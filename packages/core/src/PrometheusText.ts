/**
 * The Prometheus text format (0.0.4) of Effect's metric registry: every counter, gauge and histogram,
 * Waybill's and the host's. Chosen over the OpenTelemetry exporter and prom-client (docs/decisions/0086).
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricKeyType from "effect/MetricKeyType"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import * as Metrics from "./Metrics.js"

/** The `Content-Type` of the text format. @since 0.1.0 */
export const contentType = "text/plain; version=0.0.4; charset=utf-8"

const name = (raw: string) => raw.replace(/[^a-zA-Z0-9_:]/g, "_").replace(/^([0-9])/, "_$1")
const labelName = (raw: string) => raw.replace(/[^a-zA-Z0-9_]/g, "_").replace(/^([0-9])/, "_$1")
const labelValue = (raw: string) => raw.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')
const help = (raw: string) => raw.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")
const number = (value: number | bigint) =>
  typeof value === "bigint"
    ? value.toString()
    : Number.isNaN(value)
      ? "NaN"
      : value === Number.POSITIVE_INFINITY
        ? "+Inf"
        : value === Number.NEGATIVE_INFINITY
          ? "-Inf"
          : String(value)

const labels = (pairs: ReadonlyArray<readonly [string, string]>) =>
  pairs.length === 0 ? "" : `{${pairs.map(([key, value]) => `${labelName(key)}="${labelValue(value)}"`).join(",")}}`

interface Family {
  readonly type: "counter" | "gauge" | "histogram"
  readonly help: string
  readonly lines: Array<string>
}

/**
 * The text of a registry snapshot, families sorted by name; `described` families without a series
 * get their `# HELP` and `# TYPE` alone. Frequencies and summaries are left out.
 * @since 0.1.0
 */
export const format = (
  snapshot: ReadonlyArray<MetricPair.MetricPair.Untyped>,
  described: typeof Metrics.families = []
): string => {
  const families = new Map<string, Family>()
  for (const family of described) families.set(family.name, { type: family.type, help: family.help, lines: [] })
  for (const pair of snapshot) {
    const key = pair.metricKey
    const state = pair.metricState
    const type = MetricKeyType.isCounterKey(key.keyType)
      ? "counter"
      : MetricKeyType.isGaugeKey(key.keyType)
        ? "gauge"
        : MetricKeyType.isHistogramKey(key.keyType)
          ? "histogram"
          : undefined
    if (type === undefined) continue
    const family = name(key.name)
    let entry = families.get(family)
    if (entry === undefined) {
      entry = { type, help: Option.getOrElse(key.description, () => key.name), lines: [] }
      families.set(family, entry)
    }
    const tags = key.tags.map((tag) => [tag.key, tag.value] as const)
    if (MetricState.isCounterState(state)) entry.lines.push(`${family}${labels(tags)} ${number(state.count)}`)
    else if (MetricState.isGaugeState(state)) entry.lines.push(`${family}${labels(tags)} ${number(state.value)}`)
    else if (MetricState.isHistogramState(state)) {
      let sawInfinity = false
      for (const [bound, count] of state.buckets) {
        if (bound === Number.POSITIVE_INFINITY) sawInfinity = true
        entry.lines.push(`${family}_bucket${labels([...tags, ["le", number(bound)]])} ${count}`)
      }
      if (!sawInfinity) entry.lines.push(`${family}_bucket${labels([...tags, ["le", "+Inf"]])} ${state.count}`)
      entry.lines.push(`${family}_sum${labels(tags)} ${number(state.sum)}`)
      entry.lines.push(`${family}_count${labels(tags)} ${state.count}`)
    }
  }
  const out: Array<string> = []
  for (const family of [...families.keys()].sort()) {
    const entry = families.get(family)!
    out.push(`# HELP ${family} ${help(entry.help)}`, `# TYPE ${family} ${entry.type}`, ...entry.lines)
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`
}

/** The text of Effect's metric registry now, Waybill's families described from the start. @since 0.1.0 */
export const text: Effect.Effect<string> = Effect.map(Metric.snapshot, (snapshot) => format(snapshot, Metrics.families))
