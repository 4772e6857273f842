/**
 * The health of one webhook over the last 24 hours (`GET /webhooks/{id}/stats`): succeeded and
 * failed deliveries per hour as stacked bars in plain SVG (no chart library), the totals, and
 * the latency p50 and p95. The bars scale to any width; their labels are HTML, so they stay
 * legible at 390 px. For screen readers and keyboards: the SVG is one image with a text
 * summary, and a disclosure holds every hour as a table.
 */
import type { DeliveryStats } from "@waybill/webhooks/DeliveryStats"

// Each hour is 10 units wide in the SVG, its bar 7; the plot is 100 units high.
const SLOT = 10
const BAR = 7
const HEIGHT = 100

/** A latency for people: milliseconds below a second, seconds (one decimal) above. */
export const formatLatency = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`)

// The hour a bucket starts, as the console shows times (UTC).
const hourOf = (seconds: number) => `${new Date(seconds * 1000).toISOString().slice(11, 16)} UTC`

// A round upper bound for the axis: 1, 2 or 5 times a power of ten, at least the highest bar.
const axisMax = (highest: number) => {
  if (highest <= 0) return 1
  const power = 10 ** Math.floor(Math.log10(highest))
  return ([1, 2, 5, 10].map((step) => step * power).find((bound) => bound >= highest) ?? highest) as number
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`

/** A sentence that says what the chart shows. */
export const summaryOf = (stats: DeliveryStats) => {
  const busiest = stats.buckets.reduce(
    (best, bucket) => (bucket.succeeded + bucket.failed > best.succeeded + best.failed ? bucket : best),
    stats.buckets[0] ?? { start: 0, succeeded: 0, failed: 0 }
  )
  const counts = `${plural(stats.succeeded, "delivery", "deliveries")} succeeded and ${stats.failed} failed in the last ${stats.buckets.length} hours`
  const busy =
    busiest.succeeded + busiest.failed === 0
      ? ""
      : `; the busiest hour, from ${hourOf(busiest.start)}, had ${busiest.succeeded} succeeded and ${busiest.failed} failed`
  return `${counts}${busy}.`
}

interface Total {
  readonly label: string
  readonly swatch?: "succeeded" | "failed"
  readonly value: number | string
}

// The totals beside the chart; the two plotted ones with their swatch.
const totals = (stats: DeliveryStats): ReadonlyArray<Total> => {
  const latency = (percentile: "p50" | "p95") =>
    stats.latencyMs === null ? "–" : formatLatency(stats.latencyMs[percentile])
  return [
    { label: "Succeeded", swatch: "succeeded", value: stats.succeeded },
    { label: "Failed", swatch: "failed", value: stats.failed },
    { label: "Pending", value: stats.pending },
    { label: "Held", value: stats.held },
    { label: "Latency p50", value: latency("p50") },
    { label: "Latency p95", value: latency("p95") }
  ]
}

export const DeliveryChart = (props: { readonly stats: DeliveryStats }) => {
  const { stats } = props
  const top = axisMax(Math.max(0, ...stats.buckets.map((bucket) => bucket.succeeded + bucket.failed)))
  const width = stats.buckets.length * SLOT
  const scale = (count: number) => (count / top) * HEIGHT
  // Labels under every sixth hour, and the last.
  const labelled = stats.buckets.flatMap((bucket, index) =>
    index % 6 === 0 || index === stats.buckets.length - 1 ? [{ index, bucket }] : []
  )
  return (
    <figure class="chart" aria-labelledby="chart-title">
      <figcaption id="chart-title">Deliveries per hour, last {stats.buckets.length} hours (times in UTC)</figcaption>
      <dl class="chart-totals">
        {totals(stats).map(({ label, swatch, value }) => (
          <div key={label}>
            <dt>
              {swatch !== undefined && <span class={`swatch swatch-${swatch}`} aria-hidden="true" />}
              {swatch !== undefined ? ` ${label}` : label}
            </dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <p class="chart-note">
        Latency: from the event's recording to the response that ended its delivery
        {stats.latencyMs === null ? " (no delivery has ended in this window)." : "."}
      </p>
      <div class="chart-plot">
        <div class="chart-y" aria-hidden="true">
          <span>{top}</span>
          <span>{top / 2 >= 1 && Number.isInteger(top / 2) ? top / 2 : ""}</span>
          <span>0</span>
        </div>
        <div class="chart-area">
          <svg
            role="img"
            aria-label={summaryOf(stats)}
            viewBox={`0 0 ${width} ${HEIGHT}`}
            preserveAspectRatio="none"
            width="100%"
            height="160"
          >
            <line class="grid" x1="0" x2={width} y1={HEIGHT / 2} y2={HEIGHT / 2} vector-effect="non-scaling-stroke" />
            <line class="axis" x1="0" x2={width} y1={HEIGHT} y2={HEIGHT} vector-effect="non-scaling-stroke" />
            {stats.buckets.map((bucket, index) => {
              const x = index * SLOT + (SLOT - BAR) / 2
              const succeeded = scale(bucket.succeeded)
              const failed = scale(bucket.failed)
              return (
                <g key={bucket.start}>
                  <title>{`${hourOf(bucket.start)}: ${bucket.succeeded} succeeded, ${bucket.failed} failed`}</title>
                  <rect class="bar-succeeded" x={x} y={HEIGHT - succeeded} width={BAR} height={succeeded} />
                  <rect class="bar-failed" x={x} y={HEIGHT - succeeded - failed} width={BAR} height={failed} />
                </g>
              )
            })}
          </svg>
          <div class="chart-x" aria-hidden="true">
            {labelled.map(({ index, bucket }) => (
              <span key={bucket.start} style={{ left: `${((index + 0.5) / stats.buckets.length) * 100}%` }}>
                {hourOf(bucket.start).slice(0, 5)}
              </span>
            ))}
          </div>
        </div>
      </div>
      <details class="chart-table">
        <summary>Every hour as a table</summary>
        <table>
          <caption class="visually-hidden">Deliveries per hour</caption>
          <thead>
            <tr>
              <th scope="col">Hour from</th>
              <th scope="col">Succeeded</th>
              <th scope="col">Failed</th>
            </tr>
          </thead>
          <tbody>
            {stats.buckets.map((bucket) => (
              <tr key={bucket.start}>
                <th scope="row">{hourOf(bucket.start)}</th>
                <td>{bucket.succeeded}</td>
                <td>{bucket.failed}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  )
}
