/**
 * Retention (contract §8): events, their deliveries and attempts, and failure alerts kept for a
 * window, then removed by whole time ranges; deliveries still open when their event leaves the
 * window end as `expired`, counted and alerted first. The rules here are plain functions; the
 * storage (`RetentionStore`) creates, expires and drops the ranges.
 * @since 0.1.0
 */
import * as Availability from "@waybill/core/Availability"
import * as Metrics from "@waybill/core/Metrics"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"

const minute = 60_000
const day = 24 * 60 * minute

/** The default window: 30 days. @since 0.1.0 */
export const defaultRetentionMs = 30 * day

/**
 * The window the process keeps data for, in milliseconds (0 keeps everything). A reference with the
 * contract's default, so replay and the webhook answers read it without a layer.
 * @since 0.1.0
 */
export class Window extends Context.Reference<Window>()("@waybill/webhooks/Retention/Window", {
  defaultValue: () => ({ retentionMs: defaultRetentionMs })
}) {}

/**
 * Reads a retention as `WAYBILL_RETENTION` takes it: `<n>d`, `<n>h` or `<n>m` (at least one minute,
 * at most ten years), or `0` to keep everything; milliseconds, or why not.
 * @since 0.1.0
 */
export const parse = (text: string): Either.Either<number, string> => {
  const trimmed = text.trim()
  if (trimmed === "0") return Either.right(0)
  const match = /^([1-9][0-9]{0,6})([dhm])$/.exec(trimmed)
  const unit = match === null ? undefined : { d: day, h: 60 * minute, m: minute }[match[2] as "d" | "h" | "m"]
  if (match === null || unit === undefined) {
    return Either.left("must be a duration such as 30d, 12h or 90m (days, hours or minutes), or 0 to keep everything")
  }
  const millis = Number(match[1]) * unit
  if (millis > 3650 * day) return Either.left("must be at most 3650d")
  return Either.right(millis)
}

/** A retention as people write it: `30d`, `12h`, `2m`, or `0`. @since 0.1.0 */
export const format = (retentionMs: number): string =>
  retentionMs === 0
    ? "0"
    : retentionMs % day === 0
      ? `${retentionMs / day}d`
      : retentionMs % (60 * minute) === 0
        ? `${retentionMs / (60 * minute)}h`
        : `${Math.round(retentionMs / minute)}m`

/**
 * The size of one time range: a tenth of the window, so a range is dropped at most 10 % of the window
 * after its oldest event passed it. Keeping everything sizes ranges as the default window does.
 * @since 0.1.0
 */
export const rangeMs = (retentionMs: number): number =>
  Math.floor((retentionMs === 0 ? defaultRetentionMs : retentionMs) / 10)

/**
 * How far ahead of now ranges exist: three ranges, and at least two minutes, so a stalled removal
 * run (or a clock a little ahead) never finds a moment without its range.
 * @since 0.1.0
 */
export const aheadMs = (retentionMs: number): number => Math.max(3 * rangeMs(retentionMs), 2 * minute)

/**
 * How often a process tries a removal run: once per range, at most a minute apart, so removal is late
 * by at most a range plus a minute (the contract's 10 % + 60 s).
 * @since 0.1.0
 */
export const intervalMs = (retentionMs: number): number => Math.min(rangeMs(retentionMs), minute)

/** A time range as storage holds it: `[from, to)` in epoch ms; `from` null for the range of everything before. @since 0.1.0 */
export interface Range {
  readonly from: number | null
  readonly to: number
}

/** What one run does to the ranges: create these, drop those, and trim the open-ended one below `trimBelow`. @since 0.1.0 */
export interface Plan<R extends Range = Range> {
  readonly create: ReadonlyArray<Range>
  readonly drop: ReadonlyArray<R>
  readonly trimBelow: number | null
}

/**
 * Ranges from `from` until `until` is covered, each ending on a multiple of `size` (the first may
 * be shorter, so it continues the range before it).
 * @since 0.1.0
 */
export const aligned = (from: number, until: number, size: number): Array<Range> => {
  const ranges: Array<Range> = []
  for (let end = from; end < until; ) {
    const next = (Math.floor(end / size) + 1) * size
    ranges.push({ from: end, to: next })
    end = next
  }
  return ranges
}

/**
 * Plans a run over one table's ranges at `now`. New ranges continue from the newest one, aligned
 * to multiples of the range size (so processes agree); a gap left by a long stop becomes one range
 * up to the present rather than many. Ranges wholly older than the window are dropped; the range
 * of everything before (rows kept from before time ranges) is trimmed row by row instead.
 * @since 0.1.0
 */
export const plan = <R extends Range>(ranges: ReadonlyArray<R>, now: number, retentionMs: number): Plan<R> => {
  const size = rangeMs(retentionMs)
  const until = now + aheadMs(retentionMs)
  const create: Array<Range> = []
  let end = ranges.reduce((newest, range) => Math.max(newest, range.to), Number.NEGATIVE_INFINITY)
  if (!Number.isFinite(end)) end = Math.floor(now / size) * size
  const present = Math.floor(now / size) * size
  if (end < present) {
    create.push({ from: end, to: present })
    end = present
  }
  create.push(...aligned(end, until, size))
  if (retentionMs === 0) return { create, drop: [], trimBelow: null }
  const cutoff = now - retentionMs
  const drop = ranges.filter((range) => range.to <= cutoff)
  const open = ranges.find((range) => range.from === null && range.to > cutoff)
  return { create, drop, trimBelow: open === undefined ? null : cutoff }
}

/** One webhook's deliveries that expired in a run, and the alert raised for them. @since 0.1.0 */
export interface Expired {
  readonly workspaceId: string
  readonly webhookId: string
  readonly count: number
  readonly alertId: string
  readonly lastDeliveryId: string
  readonly lastEventId: string
  readonly lastEventType: string
}

/** What a run removed, by kind, and which deliveries it expired. @since 0.1.0 */
export interface Removal {
  readonly events: number
  readonly deliveries: number
  readonly attempts: number
  readonly alerts: number
  readonly expired: ReadonlyArray<Expired>
}

/** The reason an expiry alert gives (`GET /alerts`): it starts with `expired`. @since 0.1.0 */
export const expiryReason = (count: number, retentionMs: number): string =>
  `expired: ${count} ${
    count === 1 ? "delivery" : "deliveries"
  } not delivered within the retention of ${format(retentionMs)}`

/**
 * Where removal happens: ranges created ahead, open deliveries of expired ranges ended as `expired`
 * with one alert per webhook, expired ranges dropped. `run` answers `null` while another process
 * runs it (one at a time over the database).
 * @since 0.1.0
 */
export class RetentionStore extends Context.Tag("@waybill/webhooks/RetentionStore")<
  RetentionStore,
  {
    /** Creates the ranges the window needs ahead of `now` (what `run` does first). */
    readonly prepare: (now: number, retentionMs: number) => Effect.Effect<void>
    readonly run: (now: number, retentionMs: number) => Effect.Effect<Removal | null>
  }
>() {}

/**
 * One removal run: the store's work, then the counters (`waybill_retention_removed_total`,
 * `waybill_deliveries_total{status="expired"}`) and one warning per webhook whose deliveries expired.
 * @since 0.1.0
 */
export const run = (now: number, retentionMs: number): Effect.Effect<Removal | null, never, RetentionStore> =>
  Effect.flatMap(RetentionStore, (store) => store.run(now, retentionMs)).pipe(
    Effect.tap((removal) => (removal === null ? Effect.void : report(removal, retentionMs)))
  )

const report = (removal: Removal, retentionMs: number) =>
  Effect.gen(function* () {
    for (const kind of ["events", "deliveries", "attempts", "alerts"] as const) {
      if (removal[kind] > 0) Metrics.recordRemoved(kind, removal[kind])
    }
    for (const expired of removal.expired) {
      Metrics.recordExpired(expired.count)
      yield* Effect.logWarning("Webhook deliveries expired undelivered").pipe(
        Effect.annotateLogs({
          alertId: expired.alertId,
          workspaceId: expired.workspaceId,
          webhookId: expired.webhookId,
          deliveryId: expired.lastDeliveryId,
          eventId: expired.lastEventId,
          eventType: expired.lastEventType,
          reason: expiryReason(expired.count, retentionMs)
        })
      )
    }
    if (removal.events + removal.deliveries + removal.alerts > 0) {
      yield* Effect.logDebug("Removed data past the retention").pipe(
        Effect.annotateLogs({
          events: removal.events,
          deliveries: removal.deliveries,
          attempts: removal.attempts,
          alerts: removal.alerts
        })
      )
    }
  })

/**
 * The ranges the window needs ahead, made when the layer is built: before the ports serve, so no
 * write of the first moments needs a range of its own.
 * @since 0.1.0
 */
export const layerRanges: Layer.Layer<never, never, RetentionStore> = Layer.effectDiscard(
  Effect.gen(function* () {
    const { retentionMs } = yield* Window
    const store = yield* RetentionStore
    yield* store.prepare(yield* Clock.currentTimeMillis, retentionMs)
  })
)

/**
 * Retention in the background: a removal run at once, then every `intervalMs` (at most one process
 * at a time does the work); a failed run is logged and the loop goes on. Every process runs it, so
 * removal goes on while any one of them does.
 * @since 0.1.0
 */
export const layerLoop: Layer.Layer<never, never, RetentionStore> = Layer.scopedDiscard(
  Effect.flatMap(Window, ({ retentionMs }) =>
    Availability.forkRepeated(
      Effect.flatMap(Clock.currentTimeMillis, (now) => run(now, retentionMs)),
      {
        loop: "the retention loop",
        failure: "A removal run failed; retried next interval",
        interval: intervalMs(retentionMs)
      }
    )
  )
)
