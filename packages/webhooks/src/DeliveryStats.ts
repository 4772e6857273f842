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

/**
 * The deliveries a store counts: events recorded since `since` (epoch s, the start of a clock
 * hour), in `hours` hourly buckets, the last one the current hour. @since 0.1.0
 */
export interface StatsWindow {
  readonly since: number
  readonly hours: number
}

/**
 * The last `hours` clock hours (UTC), the current one included: buckets are whole hours, so a
 * store keeps one row per webhook and hour (docs/decisions/0127), and totals and buckets agree.
 * @since 0.1.0
 */
export const windowOf = (nowSeconds: number, hourCount: number): StatsWindow => ({
  since: (Math.floor(nowSeconds / 3600) - (hourCount - 1)) * 3600,
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
 * A latency's bucket in a histogram: milliseconds below 64 exactly, above that 32 buckets per
 * doubling (each at most 1/32 wide, about 3 %). What a store keeps per hour instead of every latency.
 * @since 0.3.0
 */
export const latencyBucket = (latencyMs: number): number => {
  const value = Math.max(0, Math.floor(latencyMs))
  if (value < 64) return value
  const octave = Math.floor(Math.log2(value))
  // `log2` of a value just under a power of two may round up: step back so the bucket holds it.
  const exponent = 2 ** octave > value ? octave - 1 : octave
  return 64 + (exponent - 6) * 32 + Math.floor(value / 2 ** (exponent - 5)) - 32
}

/** The least latency in bucket `bucket` (`latencyBucket`): what a percentile in it reads. @since 0.3.0 */
export const bucketFloor = (bucket: number): number => {
  if (bucket < 64) return bucket
  const exponent = Math.floor((bucket - 64) / 32) + 6
  return (32 + ((bucket - 64) % 32)) * 2 ** (exponent - 5)
}

/** Latencies counted per `latencyBucket`, as a store keeps them: bucket number → count. @since 0.3.0 */
export type LatencyHistogram = ReadonlyMap<number, number>

/**
 * The nearest-rank value at fraction `p` of a histogram's latencies (as PostgreSQL's
 * `percentile_disc` over them), read as its bucket's floor: exact below 64 ms, within 3 % above.
 * `undefined` for an empty histogram.
 * @since 0.3.0
 */
export const percentileOf = (histogram: LatencyHistogram, p: number): number | undefined => {
  const sorted = [...histogram].filter(([, count]) => count > 0).sort((a, b) => a[0] - b[0])
  const total = sorted.reduce((sum, [, count]) => sum + count, 0)
  if (total === 0) return undefined
  const rank = Math.max(1, Math.ceil(p * total))
  let seen = 0
  for (const [bucket, count] of sorted) {
    seen += count
    if (seen >= rank) return bucketFloor(bucket)
  }
  return bucketFloor(sorted.at(-1)![0])
}

/** `p50` and `p95` of a histogram, or `null` when it is empty. @since 0.3.0 */
export const latencyOf = (histogram: LatencyHistogram): DeliveryStats["latencyMs"] => {
  const p50 = percentileOf(histogram, 0.5)
  const p95 = percentileOf(histogram, 0.95)
  return p50 === undefined || p95 === undefined ? null : { p50, p95 }
}

/**
 * One hour of a webhook's deliveries as a store keeps it: the hour (epoch hours, of the events'
 * recording), its deliveries by status, and the latencies of those that ended (`latencyBucket`
 * number → count): a map, a stored JSON object (its keys are strings), or that object's JSON text.
 * @since 0.3.0
 */
export interface HourRow {
  readonly hour: number
  readonly succeeded: number
  readonly failed: number
  readonly pending: number
  readonly held: number
  readonly latency: LatencyHistogram | Readonly<Record<string, number>> | string
}

const isHistogram = (latency: HourRow["latency"]): latency is LatencyHistogram => latency instanceof Map

// The pairs of the text being scanned, kept until it has all been read: a pair takes at least 6
// characters (`"0":1,`), so a text's pairs fit in a third of its length.
let scanned = new Float64Array(1024)

/**
 * Adds the pairs of a histogram's JSON text as PostgreSQL writes a `jsonb` object of integers
 * (`{"64": 3, "65": -1}`) to `into` (bucket → count, buckets below 4096: any latency up to
 * 2^131 ms). Any other text adds nothing and answers false, to be read by `JSON.parse`. A week
 * holds some 28,000 pairs: scanned, 0.7–0.9 ms, where `JSON.parse` and adding up its objects'
 * keys take 1.5 ms (decision 0136). Character codes are written out (`34` `"`, `32` space,
 * `44` comma, `45` minus, `48`–`57` digits, `58` colon, `123` `{`, `125` `}`): read from module
 * constants, the scan took twice as long.
 */
const addScanned = (into: Float64Array, text: string): boolean => {
  if (scanned.length < text.length / 3) scanned = new Float64Array(Math.ceil(text.length / 3))
  const buffer = scanned
  let pairs = 0
  let i = 0
  let c: number = text.charCodeAt(i)
  if (c !== 123) return false
  do c = text.charCodeAt(++i)
  while (c === 32)
  while (c !== 125) {
    if (c !== 34) return false
    const keyStart = ++i
    let key = 0
    for (c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) key = key * 10 + c - 48
    if (i === keyStart || key >= 4096 || c !== 34) return false
    do c = text.charCodeAt(++i)
    while (c === 32)
    if (c !== 58) return false
    do c = text.charCodeAt(++i)
    while (c === 32)
    const sign = c === 45 ? -1 : 1
    if (sign === -1) i++
    const countStart = i
    let count = 0
    for (c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) count = count * 10 + c - 48
    if (i === countStart || i - countStart > 15) return false
    buffer[pairs++] = key
    buffer[pairs++] = sign * count
    while (c === 32) c = text.charCodeAt(++i)
    if (c === 44) {
      do c = text.charCodeAt(++i)
      while (c === 32)
    } else if (c !== 125) return false
  }
  if (i !== text.length - 1) return false
  for (let at = 0; at < pairs; at += 2) into[buffer[at]!]! += buffer[at + 1]!
  return true
}

/**
 * The statistics of a window from its hours (those before it skipped; any after the current one,
 * from a clock ahead, count in the last bucket). What every store answers through.
 * @since 0.3.0
 */
export const fromHours = (window: StatsWindow, hours: Iterable<HourRow>): DeliveryStats => {
  const totals = { succeeded: 0, failed: 0, pending: 0, held: 0 }
  const counts = new Map<number, { succeeded: number; failed: number }>()
  // Counts by bucket number, added up in an array; a stored object's keys by their text, each
  // turned into a number once at the end. No prototype, so that a stored key such as `__proto__`
  // is a key like any other.
  const byBucket = new Float64Array(4096)
  const byKey: Record<string, number> = Object.create(null)
  const addObject = (latency: Readonly<Record<string, number>>) => {
    for (const at in latency) byKey[at] = (byKey[at] ?? 0) + Number(latency[at])
  }
  for (const row of hours) {
    if (row.hour * 3600 < window.since) continue
    totals.succeeded += row.succeeded
    totals.failed += row.failed
    totals.pending += row.pending
    totals.held += row.held
    const bucket = bucketOf(window, row.hour * 3600)
    const count = counts.get(bucket) ?? { succeeded: 0, failed: 0 }
    count.succeeded += row.succeeded
    count.failed += row.failed
    counts.set(bucket, count)
    const latency = row.latency
    if (typeof latency === "string") {
      if (!addScanned(byBucket, latency)) addObject(JSON.parse(latency))
    } else if (isHistogram(latency)) for (const [at, n] of latency) byKey[at] = (byKey[at] ?? 0) + n
    else addObject(latency)
  }
  const histogram = new Map<number, number>()
  byBucket.forEach((n, at) => {
    if (n !== 0) histogram.set(at, n)
  })
  for (const at in byKey) histogram.set(Number(at), (histogram.get(Number(at)) ?? 0) + byKey[at]!)
  return { ...totals, latencyMs: latencyOf(histogram), buckets: bucketsOf(window, counts) }
}

/** One delivery as `summarize` counts it (`latencyMs` `null` while unknown). @since 0.1.0 */
export interface StatsRow {
  readonly eventCreatedAt: number
  readonly status: DeliveryStatus
  readonly latencyMs: number | null
}

/**
 * The statistics of a window from its deliveries, for an in-memory store: counted into hours as
 * a store on disk keeps them, then `fromHours`, so both answer alike.
 * @since 0.1.0
 */
export const summarize = (window: StatsWindow, rows: Iterable<StatsRow>): DeliveryStats => {
  const hours = new Map<
    number,
    { hour: number; succeeded: number; failed: number; pending: number; held: number; latency: Map<number, number> }
  >()
  for (const row of rows) {
    const hour = Math.floor(row.eventCreatedAt / 3600)
    let counted = hours.get(hour)
    if (counted === undefined) {
      counted = { hour, succeeded: 0, failed: 0, pending: 0, held: 0, latency: new Map() }
      hours.set(hour, counted)
    }
    counted[row.status]++
    if ((row.status === "succeeded" || row.status === "failed") && row.latencyMs !== null) {
      const at = latencyBucket(row.latencyMs)
      counted.latency.set(at, (counted.latency.get(at) ?? 0) + 1)
    }
  }
  return fromHours(window, hours.values())
}
