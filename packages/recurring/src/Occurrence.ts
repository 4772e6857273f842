/**
 * Expansion of a recurring master into occurrences: the tours it would generate, with trigger
 * instant and local date, name, vehicle class and absolute stop windows.
 * @since 0.1.0
 */

import * as Calendar from "@waybill/core/Calendar"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as cron from "./internal/cron.js"
import * as triggers from "./internal/triggers.js"
import * as NameTemplate from "./NameTemplate.js"
import type { RecurringMaster } from "./RecurringMaster.js"
import { totalWeightKg } from "./RecurringMaster.js"
import * as VehicleClass from "./VehicleClass.js"
import * as WallClock from "./WallClock.js"

/** An absolute time window, epoch seconds. @since 0.1.0 */
export const Window = Schema.Struct({ startsAt: Schema.Int, endsAt: Schema.Int }).annotations({
  identifier: "StopWindow"
})

/** A stop of an occurrence: the master's address and day offset, and its absolute window. @since 0.1.0 */
export interface OccurrenceStop {
  readonly address: { readonly [key: string]: unknown }
  readonly dayOffset: number
  readonly window: { readonly startsAt: number; readonly endsAt: number }
}

/** One tour a master generates, not yet stored (no id, no creation time). @since 0.1.0 */
export interface Occurrence {
  /** Trigger instant, epoch seconds. */
  readonly triggerAt: number
  /** The trigger's calendar day in the schedule's zone. */
  readonly triggerDate: WallClock.LocalDate
  readonly weekday: WallClock.Weekday
  readonly name: string | null
  readonly vehicleClass: string
  readonly vehicleClassReason: VehicleClass.VehicleClassReason
  readonly stops: ReadonlyArray<OccurrenceStop>
}

/** An entry of `GET /drafts/{id}/occurrences`. @since 0.1.0 */
export const Preview = Schema.Struct({
  triggerAt: Schema.Int,
  triggerDate: Schema.String,
  name: Schema.NullOr(Schema.String),
  vehicleClass: Schema.String,
  stops: Schema.Array(Schema.Struct({ dayOffset: Schema.Int, window: Window }))
}).annotations({ identifier: "OccurrencePreview" })

/** @since 0.1.0 */
export type Preview = typeof Preview.Type

const BY_JS_DAY: ReadonlyArray<WallClock.Weekday> = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

/**
 * The generation horizon: `now`'s wall-clock time `leadTimeDays` calendar days later in the zone,
 * so a DST change in between does not shift it by an hour.
 * @since 0.1.0
 */
export const horizon = (now: number, leadTimeDays: number, timeZone: string): number =>
  WallClock.addCalendarDays(now, leadTimeDays, timeZone)

const minutesOf = (time: string, master: RecurringMaster): number => {
  const minutes = Calendar.parseTime(time)
  if (minutes === undefined) throw new RangeError(`Master ${master.id}: stop time "${time}" is not HH:MM`)
  return minutes
}

/** Trigger instants of a master in `[from, to)` inside its validity window, at most `limit`. @since 0.1.0 */
export const triggerInstants = (
  master: RecurringMaster,
  from: number,
  to: number,
  limit = Number.POSITIVE_INFINITY
): ReadonlyArray<number> => {
  const schedule = master.schedule
  const start = Math.max(from, schedule.startsAt ?? from)
  const end = Math.min(to, schedule.endsAt ?? to)
  const compiled = schedule.cronExpressions.map(cron.compile)
  return limit === Number.POSITIVE_INFINITY
    ? triggers.between(compiled, schedule.timezone, start, end)
    : triggers.first(compiled, schedule.timezone, start, end, limit)
}

/**
 * Builds the occurrences of trigger instants, pure. A stop window is its `timeWindow` on the
 * trigger's local date plus `dayOffset` days plus the weekday offset, resolved in the zone; an
 * end that a DST gap puts before its start is clamped to the start.
 * @since 0.1.0
 */
export const occurrencesAt = (
  master: RecurringMaster,
  instants: ReadonlyArray<number>,
  decision: VehicleClass.Decision
): Array<Occurrence> => {
  const timeZone = master.schedule.timezone
  const offsets = master.schedule.weekdayTimeOffsets
  const stops = master.stops.map((stop) => ({
    stop,
    from: minutesOf(stop.timeWindow.from, master) * 60,
    to: minutesOf(stop.timeWindow.to, master) * 60
  }))
  const out: Array<Occurrence> = []
  for (const triggerAt of instants) {
    const days = Math.floor(Calendar.toFloating(timeZone, triggerAt) / Calendar.SECONDS_PER_DAY)
    const triggerDate = Calendar.formatDate(days)
    const weekday = BY_JS_DAY[Calendar.weekdayOf(days)]!
    const shift = (offsets?.[weekday] ?? 0) * 60
    out.push({
      triggerAt,
      triggerDate,
      weekday,
      name: NameTemplate.render(master.name, triggerDate),
      vehicleClass: decision.vehicleClass,
      vehicleClassReason: decision.reason,
      stops: stops.map(({ from, stop, to }) => {
        const base = (days + stop.dayOffset) * Calendar.SECONDS_PER_DAY + shift
        const startsAt = Calendar.resolve(timeZone, base + from)
        const endsAt = Math.max(startsAt, Calendar.resolve(timeZone, base + to))
        return { address: stop.address, dayOffset: stop.dayOffset, window: { startsAt, endsAt } }
      })
    })
  }
  return out
}

/**
 * The vehicle class of a master's tours: `preserve` keeps the master's, `recalculate` asks the
 * `VehicleClassPolicy` with the total load weight.
 * @since 0.1.0
 */
export const decideVehicleClass = (
  master: RecurringMaster
): Effect.Effect<VehicleClass.Decision, never, VehicleClass.VehicleClassPolicy> =>
  master.schedule.vehicleClassAdjustmentStrategy === "preserve"
    ? Effect.succeed({ vehicleClass: master.vehicleClass, reason: "preserved" as const })
    : Effect.flatMap(VehicleClass.VehicleClassPolicy, (policy) =>
        policy.recalculate({ workspaceId: master.workspaceId, master, totalWeightKg: totalWeightKg(master) })
      )

/**
 * `limit`: an expansion builds at most the earliest `limit` occurrences (default: all for
 * `expand`, `MAX_PREVIEW` for a dry run).
 * @since 0.1.0
 */
export interface ExpansionOptions {
  readonly limit?: number
}

/**
 * Expands a master into its occurrences with triggers in `[from, to)` ∩ `[startsAt, endsAt)`
 * (epoch seconds), deduplicated by instant, ascending. The policy is asked only if there is one.
 * @since 0.1.0
 */
export const expand = (
  master: RecurringMaster,
  from: number,
  to: number,
  options?: ExpansionOptions
): Effect.Effect<ReadonlyArray<Occurrence>, never, VehicleClass.VehicleClassPolicy> =>
  Effect.suspend(() => {
    const instants = triggerInstants(master, from, to, options?.limit)
    return instants.length === 0
      ? Effect.succeed([])
      : Effect.map(decideVehicleClass(master), (decision) => occurrencesAt(master, instants, decision))
  })

/**
 * The most occurrences a dry run answers, the earliest ones: a minutely schedule over 366 days
 * would be half a million.
 * @since 0.1.0
 */
export const MAX_PREVIEW = 10_000

/** A dry run's answer: the earliest occurrences, at most the limit, and whether more exist. @since 0.1.0 */
export interface DryRun {
  readonly data: ReadonlyArray<Preview>
  readonly truncated: boolean
}

// A few milliseconds of work between yields, so that a large dry run does not hold the event loop.
const DRY_RUN_CHUNK = 500

/**
 * The dry run of `GET /drafts/{id}/occurrences?days=N`: triggers in `[now, now + days calendar
 * days)` inside the validity window, whatever the status and lead time; nothing is stored. At
 * most `limit` (default `MAX_PREVIEW`), `truncated` when more exist.
 * @since 0.1.0
 */
export const dryRun = (
  master: RecurringMaster,
  now: number,
  days: number,
  options?: ExpansionOptions
): Effect.Effect<DryRun, never, VehicleClass.VehicleClassPolicy> =>
  Effect.suspend(() => {
    const limit = options?.limit ?? MAX_PREVIEW
    const start = Math.floor(now)
    const instants = triggerInstants(master, start, horizon(start, days, master.schedule.timezone), limit + 1)
    const truncated = instants.length > limit
    const kept = truncated ? instants.slice(0, limit) : instants
    if (kept.length === 0) return Effect.succeed({ data: [], truncated })
    return Effect.flatMap(decideVehicleClass(master), (decision) =>
      Effect.gen(function* () {
        const data: Array<Preview> = []
        for (let from = 0; from < kept.length; from += DRY_RUN_CHUNK) {
          if (from > 0) yield* Effect.yieldNow()
          for (const occurrence of occurrencesAt(master, kept.slice(from, from + DRY_RUN_CHUNK), decision)) {
            data.push(toPreview(occurrence))
          }
        }
        return { data, truncated }
      })
    )
  })

/** The occurrences of `dryRun` with the same arguments, without `truncated`. @since 0.1.0 */
export const occurrences = (
  ...args: Parameters<typeof dryRun>
): Effect.Effect<ReadonlyArray<Preview>, never, VehicleClass.VehicleClassPolicy> =>
  Effect.map(dryRun(...args), (run) => run.data)

/** An occurrence as the dry run shows it. @since 0.1.0 */
export const toPreview = (occurrence: Occurrence): Preview => ({
  triggerAt: occurrence.triggerAt,
  triggerDate: occurrence.triggerDate,
  name: occurrence.name,
  vehicleClass: occurrence.vehicleClass,
  stops: occurrence.stops.map((stop) => ({ dayOffset: stop.dayOffset, window: stop.window }))
})
