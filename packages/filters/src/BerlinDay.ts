/**
 * Calendar days anchored at Europe/Berlin (spec "Filtering deliveries" rule 11, contract §6): a
 * day's bounds taken once from the time-zone database, then date-field values compared with them
 * by arithmetic alone. Details: docs/internals.md (BerlinDay).
 * @since 0.1.0
 */
import * as Calendar from "@waybill/core/Calendar"
import * as Option from "effect/Option"

const MS_PER_DAY = 86_400_000
const MS_PER_HOUR = 3_600_000

/** The ECMAScript time value range: instants beyond it are not dates. */
const MAX_TIME = 8.64e15

/**
 * Epoch numbers at or above this are milliseconds, below it seconds (contract §6; the consumer
 * rule of callout-action-created's `action.createdAt`).
 * @since 0.1.0
 */
export const MILLISECONDS_THRESHOLD = 1e12

/** The instants of one Berlin calendar day, `[start, end)` in epoch milliseconds. @since 0.1.0 */
export interface DayBounds {
  /** Days since 1970-01-01. */
  readonly day: number
  /** The first instant of the day (epoch ms). */
  readonly start: number
  /** The first instant of the next day (epoch ms). */
  readonly end: number
}

/** Days since 1970-01-01 of a proleptic Gregorian date. @since 0.1.0 */
export const fromCivil: (year: number, month: number, day: number) => number = Calendar.fromCivil

/** The date of a day number. @since 0.1.0 */
export const toCivil: (day: number) => { readonly year: number; readonly month: number; readonly day: number } =
  Calendar.toCivil

/**
 * Parses a calendar date `YYYY-MM-DD` (years 0000–9999, a real day of a real month) into a day
 * number; the operand format of date conditions.
 * @since 0.1.0
 */
export const parseDate = (text: string): Option.Option<number> => Option.fromNullable(Calendar.parseDate(text))

/** Formats a day number as `YYYY-MM-DD`. @since 0.1.0 */
export const formatDate: (day: number) => string = Calendar.formatDate

const BERLIN = "Europe/Berlin"

/** The Berlin calendar day of an instant (uses `Intl`: for setup code, not per evaluation). @since 0.1.0 */
export const dayOfInstant = (epochMillis: number): number =>
  Math.floor((epochMillis + Calendar.offsetAt(BERLIN, Math.floor(epochMillis / 1000)) * 1000) / MS_PER_DAY)

/**
 * The first instant (epoch ms) of a Berlin calendar day: its midnight, or the first instant
 * after it should midnight not exist.
 * @since 0.1.0
 */
export const startOfDay = (day: number): number => Calendar.resolve(BERLIN, day * Calendar.SECONDS_PER_DAY) * 1000

/** The instants of a Berlin calendar day. Resolve these once (they use `Intl`), then `compare`. @since 0.1.0 */
export const bounds = (day: number): DayBounds => ({ day, start: startOfDay(day), end: startOfDay(day + 1) })

/** The position of an instant relative to the bounds: -1 before, 0 on, 1 after, NaN outside time. */
const compareInstant = (instant: number, dayBounds: DayBounds): number =>
  instant >= -MAX_TIME && instant <= MAX_TIME
    ? instant < dayBounds.start
      ? -1
      : instant >= dayBounds.end
        ? 1
        : 0
    : Number.NaN

/** The position of a day number relative to the bounds' day. */
const compareDay = (day: number, dayBounds: DayBounds): number =>
  day < dayBounds.day ? -1 : day > dayBounds.day ? 1 : 0

// The kind of `readIso`'s answer rides in its value: a day stays a small integer (unboxed), an
// instant is INSTANT + epoch ms, which no day reaches and which stays exact for years 0000-9999.
const INSTANT = 2 ** 52
const isInstant = (read: number): boolean => read >= INSTANT / 2

// `YYYY-MM-DD`, or `YYYY-MM-DDThh:mm[:ss[.fff…]]` (`T`, `t` or a space; `.` or `,`) with an
// optional `Z`, `±hh:mm`, `±hhmm` or `±hh`, without allocating: an instant when there is an
// offset, else a Berlin wall-clock day. NaN when malformed.
const readIso = (text: string): number => {
  const day = Calendar.readDate(text)
  if (Number.isNaN(day)) return Number.NaN
  const length = text.length
  if (length === 10) return day
  const separator = text.charCodeAt(10)
  // "T", "t" or " ", then "hh:mm"
  if ((separator !== 84 && separator !== 116 && separator !== 32) || length < 16 || text.charCodeAt(13) !== 58) {
    return Number.NaN
  }
  const hour = Calendar.readDigits(text, 11, 2)
  const minute = Calendar.readDigits(text, 14, 2)
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59) return Number.NaN
  let at = 16
  let second = 0
  let millis = 0
  if (at < length && text.charCodeAt(at) === 58) {
    second = Calendar.readDigits(text, at + 1, 2)
    if (second < 0 || second > 59) return Number.NaN
    at += 3
    const mark = text.charCodeAt(at)
    // "." or ","; digits past the milliseconds are checked but not added, so rounding can
    // never carry an instant into the next second (or day).
    if (mark === 46 || mark === 44) {
      at++
      const first = at
      while (at < length) {
        const code = text.charCodeAt(at) - 48
        if (code < 0 || code > 9) break
        if (at - first < 3) millis += code * (at === first ? 100 : at - first === 1 ? 10 : 1)
        at++
      }
      if (at === first) return Number.NaN
    }
  }
  if (at === length) return day
  const local = day * MS_PER_DAY + hour * MS_PER_HOUR + minute * 60_000 + second * 1000 + millis
  const sign = text.charCodeAt(at)
  // "Z" or "z"
  if (sign === 90 || sign === 122) {
    if (at + 1 !== length) return Number.NaN
    return INSTANT + local
  }
  // "+" or "-", then "hh", "hh:mm" or "hhmm"
  if (sign !== 43 && sign !== 45) return Number.NaN
  const offsetHour = Calendar.readDigits(text, at + 1, 2)
  let offsetMinute = 0
  const rest = length - at - 3
  if (rest === 3 && text.charCodeAt(at + 3) === 58) offsetMinute = Calendar.readDigits(text, at + 4, 2)
  else if (rest === 2) offsetMinute = Calendar.readDigits(text, at + 3, 2)
  else if (rest !== 0) return Number.NaN
  if (offsetHour < 0 || offsetHour > 23 || offsetMinute < 0 || offsetMinute > 59) return Number.NaN
  const offset = (offsetHour * 60 + offsetMinute) * 60_000
  return INSTANT + (sign === 45 ? local + offset : local - offset)
}

/** The epoch milliseconds of an epoch number (seconds below 10^12, milliseconds from there). */
const epochMillis = (value: number): number => (value >= MILLISECONDS_THRESHOLD ? value : value * 1000)

/**
 * Where a date-field value lies relative to a Berlin day: -1 before, 0 on, 1 after, NaN when it
 * is not a date, which makes every ordered comparison false ("the wrong type does not match").
 * No allocation, no `Intl`.
 * @since 0.1.0
 */
export const compare = (value: unknown, dayBounds: DayBounds): number => {
  if (typeof value === "number") return compareInstant(epochMillis(value), dayBounds)
  if (typeof value !== "string") return Number.NaN
  const read = readIso(value)
  if (Number.isNaN(read)) return Number.NaN
  return isInstant(read) ? compareInstant(read - INSTANT, dayBounds) : compareDay(read, dayBounds)
}

/**
 * The Berlin calendar day of a date-field value (epoch seconds, epoch ms, ISO-8601 string), or
 * none when it is not a date. Uses `Intl` for instants: for setup code, not hot paths.
 * @since 0.1.0
 */
export const dayOf = (value: unknown): Option.Option<number> => {
  let instant: number
  if (typeof value === "number") {
    instant = epochMillis(value)
  } else if (typeof value === "string") {
    const read = readIso(value)
    if (Number.isNaN(read)) return Option.none()
    if (!isInstant(read)) return Option.some(read)
    instant = read - INSTANT
  } else {
    return Option.none()
  }
  return instant >= -MAX_TIME && instant <= MAX_TIME ? Option.some(dayOfInstant(instant)) : Option.none()
}
