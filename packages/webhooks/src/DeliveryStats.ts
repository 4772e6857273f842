/** Delivery statistics (contract §8): the rules apart from storage, so that every store answers alike. @since 0.1.0 */
import * as Issue from "@waybill/core/Issue"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { DeliveryStatus } from "./Delivery.js"

/** The window when `hours` is omitted, and the longest one (a week). @since 0.1.0 */
export const hours = { default: 24, max: 168 } as const

/** The query of `GET /webhooks/{id}/stats` (`?hours=`). @since 0.1.0 */
export const StatsParams = Schema.Struct({
  hours: Schema.optional(
    Schema.String.annotations({
      description: "How many hours back from now: an integer from 1 to 168 (default 24)"
    })
  )
}).annotations({ identifier: "DeliveryStatsParams" })

/** @since 0.1.0 */
export type StatsParams = typeof StatsParams.Type

const Count = Schema.Int.pipe(Schema.nonNegative())

/** One hour of the window: its first second and how many of its deliveries succeeded and failed. @since 0.1.0 */
export const StatsBucket = Schema.Struct({
  start: Schema.Int.annotations({ description: "Epoch seconds: the hour's first second" }),
  succeeded: Count,
  failed: Count
}).annotations({ identifier: "DeliveryStatsBucket" })

/** @since 0.1.0 */
export type StatsBucket = typeof StatsBucket.Type

/** The answer of `GET /webhooks/{id}/stats`: `latencyMs` is `null` when no delivery has ended. @since 0.1.0 */
export const DeliveryStats = Schema.Struct({
  succeeded: Count,
  failed: Count,
  pending: Count,
  held: Count,
  latencyMs: Schema.NullOr(
    Schema.Struct({ p50: Count, p95: Count }).annotations({
      description:
        "Milliseconds from the event's recording to the response to the attempt that ended the delivery, over the deliveries that ended (succeeded or failed)"
    })
  ),
  buckets: Schema.Array(StatsBucket)
}).annotations({ identifier: "DeliveryStats" })

/** @since 0.1.0 */
export type DeliveryStats = typeof DeliveryStats.Type

/** The deliveries a store counts: events recorded since `since` (epoch s), in `hours` hourly buckets. @since 0.1.0 */
export interface StatsWindow {
  readonly since: number
  readonly hours: number
}

/** The last `hours` hours, buckets counted back from now (not clock hours) so totals and buckets agree. @since 0.1.0 */
export const windowOf = (nowSeconds: number, hourCount: number): StatsWindow => ({
  since: nowSeconds - hourCount * 3600,
  hours: hourCount
})

/** The hours a query asks for: omitted → 24; otherwise 1 to 168, or an issue at `hours`. @since 0.1.0 */
export const hoursOf = (params: StatsParams): Either.Either<number, ReadonlyArray<Issue.Issue>> => {
  if (params.hours === undefined) return Either.right(hours.default)
  const value = /^[0-9]{1,3}$/.test(params.hours) ? Number(params.hours) : Number.NaN
  return value >= 1 && value <= hours.max
    ? Either.right(value)
    : Either.left([Issue.make("hours", `must be an integer from 1 to ${hours.max}`)])
}

/** Which bucket of the window a delivery whose event was recorded at `eventCreatedAt` falls in. @since 0.1.0 */
export const bucketOf = (window: StatsWindow, eventCreatedAt: number): number =>
  Math.min(Math.floor((eventCreatedAt - window.since) / 3600), window.hours - 1)

/** Every hour of the window, oldest first, with the counts by `bucketOf` number (zeros included). @since 0.1.0 */
export const bucketsOf = (
  window: StatsWindow,
  counts: ReadonlyMap<number, { readonly succeeded: number; readonly failed: number }>
): ReadonlyArray<StatsBucket> =>
  Array.from({ length: window.hours }, (_, bucket) => ({
    start: window.since + bucket * 3600,
    succeeded: counts.get(bucket)?.succeeded ?? 0,
    failed: counts.get(bucket)?.failed ?? 0
  }))

/**
 * The nearest-rank value at fraction `p` of ascending `sorted` values (PostgreSQL's `percentile_disc`).
 * @since 0.1.0
 */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? 0

/** One delivery as `summarize` counts it (`latencyMs` `null` while unknown). @since 0.1.0 */
export interface StatsRow {
  readonly eventCreatedAt: number
  readonly status: DeliveryStatus
  readonly latencyMs: number | null
}

/** The statistics of a window from its deliveries, for an in-memory store; rows outside are skipped. @since 0.1.0 */
export const summarize = (window: StatsWindow, rows: Iterable<StatsRow>): DeliveryStats => {
  const totals = { succeeded: 0, failed: 0, pending: 0, held: 0 }
  const counts = new Map<number, { succeeded: number; failed: number }>()
  const latencies: Array<number> = []
  for (const row of rows) {
    if (row.eventCreatedAt < window.since) continue
    totals[row.status]++
    if (row.status !== "succeeded" && row.status !== "failed") continue
    const bucket = bucketOf(window, row.eventCreatedAt)
    const count = counts.get(bucket) ?? { succeeded: 0, failed: 0 }
    count[row.status]++
    counts.set(bucket, count)
    if (row.latencyMs !== null) latencies.push(row.latencyMs)
  }
  latencies.sort((a, b) => a - b)
  return {
    ...totals,
    latencyMs: latencies.length === 0 ? null : { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) },
    buckets: bucketsOf(window, counts)
  }
}
