/** The `recurringSchedule` of a recurring master: its schema, its validation and its trigger instants. @since 0.1.0 */

import * as Calendar from "@waybill/core/Calendar"
import * as Issue from "@waybill/core/Issue"
import * as JsonDepth from "@waybill/core/JsonDepth"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as cron from "./internal/cron.js"
import * as triggers_ from "./internal/triggers.js"
import * as WallClock from "./WallClock.js"

/** Latest epoch second the engine accepts (9999-12-31T23:59:59Z). @since 0.1.0 */
export const MAX_EPOCH_SECONDS = 253_402_300_799

/** At most this many cron expressions per schedule. @since 0.1.0 */
export const MAX_EXPRESSIONS = 16

const FIELD_NAMES = ["minute", "hour", "day-of-month", "month", "day-of-week"] as const
const FIELD_RANGES = ["0–59", "0–23", "1–31", "1–12 or JAN–DEC", "0–7 or SUN–SAT"] as const

const parses = (expression: string): boolean => {
  try {
    cron.compile(expression)
    return true
  } catch {
    return false
  }
}

/**
 * Why a cron expression is unacceptable, in our words (never cron-parser's), or `undefined`:
 * exactly 5 fields, no `H`, accepted by cron-parser, able to match a calendar day.
 * @since 0.1.0
 */
export const checkCronExpression = (expression: string): string | undefined => {
  const fields = cron.fieldsOf(expression)
  if (fields.length !== 5) {
    return `must have exactly 5 fields (minute hour day-of-month month day-of-week), found ${fields.length}`
  }
  // THU is the only name with an H; any other H is a hashed value, which parsers pick differently.
  if (expression.toUpperCase().replaceAll("THU", "").includes("H")) return "must not use H (hashed) values"
  if (!parses(expression)) {
    const bad = fields.flatMap((field, index) => {
      const probe = fields.map((other, i) => (i === index ? other : "*")).join(" ")
      return parses(probe) ? [] : [`the ${FIELD_NAMES[index]} field "${field}" is invalid (${FIELD_RANGES[index]})`]
    })
    return bad.length > 0
      ? `is not a valid cron expression: ${bad.join("; ")}`
      : "is not a valid cron expression: its day-of-month, month and day-of-week fields cannot be used together"
  }
  if (!cron.canMatch(cron.compile(expression))) return "never matches a calendar date"
  return undefined
}

/** A standard 5-field cron expression that cron-parser accepts and that can match a date. @since 0.1.0 */
export const CronExpression = Schema.String.pipe(
  Schema.filter((expression) => checkCronExpression(expression) ?? true)
).annotations({ identifier: "CronExpression", description: "A standard 5-field cron expression" })

/** An IANA time-zone name (`Europe/Berlin`). @since 0.1.0 */
export const TimeZone = Schema.String.pipe(Schema.filter(WallClock.isTimeZone)).annotations({
  identifier: "TimeZone",
  description: "An IANA time-zone name",
  message: () => ({ message: "must be an IANA time-zone name such as Europe/Berlin", override: true })
})

/** Epoch seconds (integer, 0 … 9999-12-31). @since 0.1.0 */
export const EpochSeconds = Schema.Int.pipe(Schema.between(0, MAX_EPOCH_SECONDS)).annotations({
  identifier: "EpochSeconds",
  message: () => ({ message: "must be an integer number of epoch seconds", override: true })
})

/** A weekday key (`mon` … `sun`). @since 0.1.0 */
export const Weekday = Schema.Literal("mon", "tue", "wed", "thu", "fri", "sat", "sun").annotations({
  identifier: "Weekday"
})

/** Wall-clock minutes added to the stop windows of a weekday's tours: an integer, −720…720. @since 0.1.0 */
export const OffsetMinutes = Schema.Int.pipe(Schema.between(-720, 720)).annotations({
  message: () => ({ message: "must be an integer number of minutes from -720 to 720", override: true })
})

const offsetFields = {
  mon: Schema.optionalWith(OffsetMinutes, { exact: true }),
  tue: Schema.optionalWith(OffsetMinutes, { exact: true }),
  wed: Schema.optionalWith(OffsetMinutes, { exact: true }),
  thu: Schema.optionalWith(OffsetMinutes, { exact: true }),
  fri: Schema.optionalWith(OffsetMinutes, { exact: true }),
  sat: Schema.optionalWith(OffsetMinutes, { exact: true }),
  sun: Schema.optionalWith(OffsetMinutes, { exact: true })
}

/** Per-weekday offsets of the stop windows, in wall-clock minutes. @since 0.1.0 */
export const WeekdayTimeOffsets = Schema.Struct(offsetFields).annotations({ identifier: "WeekdayTimeOffsets" })

/** @since 0.1.0 */
export type WeekdayTimeOffsets = typeof WeekdayTimeOffsets.Type

/** `preserve` keeps the master's vehicle class; `recalculate` asks the `VehicleClassPolicy`. @since 0.1.0 */
export const VehicleClassAdjustmentStrategy = Schema.Literal("preserve", "recalculate").annotations({
  identifier: "VehicleClassAdjustmentStrategy",
  message: () => ({ message: 'must be "preserve" or "recalculate"', override: true })
})

/** @since 0.1.0 */
export type VehicleClassAdjustmentStrategy = typeof VehicleClassAdjustmentStrategy.Type

const LeadTimeDays = Schema.Int.pipe(Schema.between(0, 365)).annotations({
  message: () => ({ message: "must be an integer number of days from 0 to 365", override: true })
})

const CronExpressions = Schema.Array(CronExpression).pipe(Schema.minItems(1), Schema.maxItems(MAX_EXPRESSIONS))

// The fields where `null` means absent, and the strategy's default (used by `decodeStrict`).
const NULLABLE = ["startsAt", "endsAt", "weekdayTimeOffsets", "vehicleClassAdjustmentStrategy"] as const
const DEFAULT_STRATEGY: VehicleClassAdjustmentStrategy = "recalculate"

const fields = {
  cronExpressions: CronExpressions,
  timezone: TimeZone,
  leadTimeDays: LeadTimeDays,
  // `null` reads as absent: JSON clients often send null for "not set".
  startsAt: Schema.optionalWith(EpochSeconds, { exact: true, nullable: true }),
  endsAt: Schema.optionalWith(EpochSeconds, { exact: true, nullable: true }),
  weekdayTimeOffsets: Schema.optionalWith(WeekdayTimeOffsets, { exact: true, nullable: true }),
  vehicleClassAdjustmentStrategy: Schema.optionalWith(VehicleClassAdjustmentStrategy, {
    exact: true,
    nullable: true,
    default: () => DEFAULT_STRATEGY
  })
}

/**
 * The schedule of a recurring master; decoding defaults the strategy to `recalculate`. Rules
 * that depend on the current time are in `validateSchedule`.
 * @since 0.1.0
 */
export const RecurringSchedule = Schema.Struct(fields).annotations({
  identifier: "RecurringSchedule",
  description: "When and how a recurring master generates tours"
})

/** A decoded schedule (strategy defaulted). @since 0.1.0 */
export type RecurringSchedule = typeof RecurringSchedule.Type

/** A schedule as sent over the wire (strategy optional). @since 0.1.0 */
export type RecurringScheduleEncoded = typeof RecurringSchedule.Encoded

/**
 * When validation runs: at `create` the window must not start in the past; at `activation` it
 * may, but `endsAt` must be in the future and the window must hold a trigger.
 * @since 0.1.0
 */
export type Phase = "create" | "activation"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const fieldIssues = (schema: Schema.Schema.AnyNoContext, value: unknown, path: string): Array<Issue.Issue> =>
  Either.match(Schema.decodeUnknownEither(schema)(value, { errors: "all", onExcessProperty: "error" }), {
    onLeft: (error: ParseResult.ParseError) => Issue.fromParseError(error, path),
    onRight: () => []
  })

const KNOWN = new Set(Object.keys(fields))

const validateStrict = Schema.validateEither(RecurringSchedule, { onExcessProperty: "error" })

// Strict decoding at less than half its cost: decoding runs every refinement twice (encoded and
// decoded side), so settle `null`s and the default first and check once. A property test holds
// the two to the same answers.
const decodeStrict = (present: Record<string, unknown>) => {
  const settled: Record<string, unknown> = { ...present }
  for (const key of NULLABLE) if (settled[key] === null) delete settled[key]
  settled.vehicleClassAdjustmentStrategy ??= DEFAULT_STRATEGY
  return validateStrict(settled)
}

const windowIssues = (
  start: number | undefined,
  end: number | undefined,
  now: number,
  phase: Phase
): Array<Issue.Issue> => {
  const issues: Array<Issue.Issue> = []
  if (phase === "create" && start !== undefined && start < now) {
    issues.push(Issue.make("startsAt", "must not be in the past"))
  }
  if (end !== undefined) {
    if (start !== undefined && end <= start) issues.push(Issue.make("endsAt", "must be after startsAt"))
    else if (end <= now) {
      issues.push(Issue.make("endsAt", phase === "create" ? "must be after now" : "must be in the future"))
    }
  }
  return issues
}

const activated = (
  schedule: RecurringSchedule,
  now: number,
  phase: Phase
): Either.Either<RecurringSchedule, ReadonlyArray<Issue.Issue>> =>
  phase === "activation" && !hasTriggerInWindow(schedule, now)
    ? Either.left([Issue.make("", "has no trigger inside its validity window")])
    : Either.right(schedule)

/**
 * Validates a schedule at `now` (epoch seconds): the decoded schedule, or every issue with a path
 * relative to the schedule (`cronExpressions.1`). Too deep a schedule gets one issue, undecoded.
 * @since 0.1.0
 */
export const validateSchedule = (
  input: unknown,
  now: number,
  options?: { readonly phase?: Phase }
): Either.Either<RecurringSchedule, ReadonlyArray<Issue.Issue>> => {
  const tooDeep = JsonDepth.depthIssue(input)
  if (Option.isSome(tooDeep)) return Either.left([tooDeep.value])
  if (!isRecord(input)) return Either.left([Issue.make("", "must be an object")])
  const phase = options?.phase ?? "create"
  // Keys holding `undefined` (from JavaScript callers spreading objects) count as absent.
  const present = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined))
  // The fast path; a schedule it refuses is checked field by field for a message per problem.
  if (Object.keys(input).every((key) => KNOWN.has(key))) {
    const strict = decodeStrict(present)
    if (Either.isRight(strict)) {
      const issues = windowIssues(strict.right.startsAt, strict.right.endsAt, now, phase)
      return issues.length > 0 ? Either.left(issues) : activated(strict.right, now, phase)
    }
  }
  const issues: Array<Issue.Issue> = []
  for (const key of Object.keys(input)) {
    if (!KNOWN.has(key)) issues.push(Issue.make(key, "is not a known schedule field"))
  }
  for (const key of ["cronExpressions", "timezone", "leadTimeDays"] as const) {
    if (input[key] === undefined) issues.push(Issue.make(key, "is required"))
  }

  const expressions = input.cronExpressions
  if (expressions !== undefined) {
    if (!Array.isArray(expressions)) {
      issues.push(Issue.make("cronExpressions", "must be an array of cron expressions"))
    } else {
      if (expressions.length === 0 || expressions.length > MAX_EXPRESSIONS) {
        issues.push(Issue.make("cronExpressions", `must hold 1 to ${MAX_EXPRESSIONS} cron expressions`))
      }
      expressions.forEach((expression, index) => {
        const path = `cronExpressions.${index}`
        if (typeof expression !== "string") issues.push(Issue.make(path, "must be a string"))
        else {
          const problem = checkCronExpression(expression)
          if (problem !== undefined) issues.push(Issue.make(path, problem))
        }
      })
    }
  }
  if (input.timezone !== undefined) issues.push(...fieldIssues(TimeZone, input.timezone, "timezone"))
  if (input.leadTimeDays !== undefined) issues.push(...fieldIssues(LeadTimeDays, input.leadTimeDays, "leadTimeDays"))
  const startsAt = input.startsAt ?? undefined
  const endsAt = input.endsAt ?? undefined
  const startIssues = startsAt === undefined ? [] : fieldIssues(EpochSeconds, startsAt, "startsAt")
  const endIssues = endsAt === undefined ? [] : fieldIssues(EpochSeconds, endsAt, "endsAt")
  issues.push(...startIssues, ...endIssues)
  issues.push(
    ...windowIssues(
      startIssues.length === 0 ? (startsAt as number | undefined) : undefined,
      endIssues.length === 0 ? (endsAt as number | undefined) : undefined,
      now,
      phase
    )
  )
  const offsets = input.weekdayTimeOffsets ?? undefined
  if (offsets !== undefined) {
    if (!isRecord(offsets)) issues.push(Issue.make("weekdayTimeOffsets", "must be an object keyed mon…sun"))
    else {
      for (const [key, value] of Object.entries(offsets)) {
        const path = `weekdayTimeOffsets.${key}`
        if (!(WallClock.weekdays as ReadonlyArray<string>).includes(key)) {
          issues.push(Issue.make(path, "is not a weekday (mon, tue, wed, thu, fri, sat, sun)"))
        } else issues.push(...fieldIssues(OffsetMinutes, value, path))
      }
    }
  }
  const strategy = input.vehicleClassAdjustmentStrategy ?? undefined
  if (strategy !== undefined) {
    issues.push(...fieldIssues(VehicleClassAdjustmentStrategy, strategy, "vehicleClassAdjustmentStrategy"))
  }
  if (issues.length > 0) return Either.left(issues)
  const decoded = Schema.decodeUnknownEither(RecurringSchedule)(present, { errors: "all" })
  if (Either.isLeft(decoded)) return Either.left(Issue.fromParseError(decoded.left))
  return activated(decoded.right, now, phase)
}

const compiledOf = (schedule: RecurringSchedule): Array<cron.Compiled> => schedule.cronExpressions.map(cron.compile)

/**
 * Every trigger instant (epoch seconds) in `[from, to)` ∩ `[startsAt, endsAt)`: all expressions
 * matched on the zone's wall clock, resolved, deduplicated, ascending.
 * @since 0.1.0
 */
export const triggers = (schedule: RecurringSchedule, from: number, to: number): ReadonlyArray<number> =>
  triggers_.between(
    compiledOf(schedule),
    schedule.timezone,
    Math.max(from, schedule.startsAt ?? from),
    Math.min(to, schedule.endsAt ?? to)
  )

// A schedule that can match a day at all matches one within 28 years (the calendar cycle).
const SEARCH_LIMIT = 29 * 366 * Calendar.SECONDS_PER_DAY

/**
 * The first trigger at or after `from` inside the validity window, searched up to `endsAt` or
 * 29 years ahead.
 * @since 0.1.0
 */
export const firstTrigger = (schedule: RecurringSchedule, from: number): Option.Option<number> => {
  const start = Math.max(from, schedule.startsAt ?? from)
  const end = Math.min(schedule.endsAt ?? Number.POSITIVE_INFINITY, start + SEARCH_LIMIT)
  return Option.fromNullable(triggers_.first(compiledOf(schedule), schedule.timezone, start, end, 1)[0])
}

/** Whether the schedule has a trigger in its validity window from `now` on (checked at activation). @since 0.1.0 */
export const hasTriggerInWindow = (schedule: RecurringSchedule, now: number): boolean =>
  Option.isSome(firstTrigger(schedule, now))

/** Drops the (bounded) caches of compiled expressions and zone offsets, for cold-start benchmarks. @since 0.1.0 */
export const clearCaches = (): void => {
  cron.clearCache()
  Calendar.clearCache()
}
