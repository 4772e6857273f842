/**
 * The proleptic Gregorian calendar as integer day numbers (days since 1970-01-01), and the UTC
 * offsets of IANA time zones, independent of the process time zone.
 * @since 0.1.0
 */

/** Seconds in a calendar day of the wall-clock ("floating") time line. @since 0.1.0 */
export const SECONDS_PER_DAY = 86_400

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`). @since 0.1.0 */
export const fromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}

/**
 * The year, month (1–12) and day of a day number, written into `out` so that hot loops allocate nothing.
 * @since 0.1.0
 */
export const civilInto = (days: number, out: [number, number, number]): [number, number, number] => {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const dayOfEra = z - era * 146_097
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const mp = Math.floor((5 * dayOfYear + 2) / 153)
  const month = mp < 10 ? mp + 3 : mp - 9
  out[0] = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  out[1] = month
  out[2] = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1
  return out
}

/** The date of a day number. @since 0.1.0 */
export const toCivil = (days: number): { readonly year: number; readonly month: number; readonly day: number } => {
  const [year, month, day] = civilInto(days, [0, 0, 0])
  return { year, month, day }
}

/** Day of the week of a day number: 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday). @since 0.1.0 */
export const weekdayOf = (days: number): number => (((days + 4) % 7) + 7) % 7

/** Whether a year is a leap year. @since 0.1.0 */
export const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** Days in a month (1–12) of a year. @since 0.1.0 */
export const daysInMonth = (year: number, month: number): number =>
  month === 2 && isLeapYear(year) ? 29 : MONTH_DAYS[month - 1]!

/** Reads `count` ASCII digits of `text` at `at` as a number; -1 when any is not a digit. @since 0.1.0 */
export const readDigits = (text: string, at: number, count: number): number => {
  let value = 0
  for (let i = at; i < at + count; i++) {
    const code = text.charCodeAt(i) - 48
    if (code < 0 || code > 9) return -1
    value = value * 10 + code
  }
  return value
}

/**
 * The day number of a `YYYY-MM-DD` date at the start of `text` (which may go on); NaN when it is
 * malformed or not a real day. No allocation.
 * @since 0.1.0
 */
export const readDate = (text: string): number => {
  if (text.length < 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return Number.NaN
  const year = readDigits(text, 0, 4)
  const month = readDigits(text, 5, 2)
  const day = readDigits(text, 8, 2)
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return Number.NaN
  return fromCivil(year, month, day)
}

/** The day number of a real calendar date `YYYY-MM-DD` (years 0000–9999), or `undefined`. @since 0.1.0 */
export const parseDate = (text: string): number | undefined => {
  if (text.length !== 10) return undefined
  const day = readDate(text)
  return Number.isNaN(day) ? undefined : day
}

/** Minutes after midnight of a 24-hour `HH:MM` time, or `undefined`. @since 0.1.0 */
export const parseTime = (text: string): number | undefined => {
  if (text.length !== 5 || text.charCodeAt(2) !== 58) return undefined
  const hour = readDigits(text, 0, 2)
  const minute = readDigits(text, 3, 2)
  return hour < 0 || hour > 23 || minute < 0 || minute > 59 ? undefined : hour * 60 + minute
}

const pad = (value: number, width: number): string => String(value).padStart(width, "0")

/** `YYYY-MM-DD` of a day number. @since 0.1.0 */
export const formatDate = (days: number): string => {
  const [year, month, day] = civilInto(days, [0, 0, 0])
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`
}

// An IANA name: letters, digits and `_+-/`; this refuses the bare offsets (`+01:00`) newer ICU accepts.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/

// Bounded: ICU accepts every case variant of a name ("EUROPE/berlin"), so keys are not a fixed set.
const MAX_ZONES = 1000
const formatters = new Map<string, Intl.DateTimeFormat>()

// `format` with a short pattern is faster than `formatToParts` and reads the offset in any year.
const formatter = (zone: string): Intl.DateTimeFormat => {
  let format = formatters.get(zone)
  if (format === undefined) {
    if (formatters.size >= MAX_ZONES) {
      formatters.clear()
      hourStarts.clear()
    }
    format = new Intl.DateTimeFormat("en-US", { timeZone: zone, year: "numeric", timeZoneName: "longOffset" })
    formatters.set(zone, format)
  }
  return format
}

/**
 * Whether `zone` is an IANA time-zone name this runtime knows; bare offsets such as `+01:00` are refused.
 * @since 0.1.0
 */
export const isTimeZone = (zone: string): boolean => {
  if (zone.length === 0 || zone.length > 64 || !ZONE_NAME.test(zone)) return false
  if (formatters.has(zone)) return true
  try {
    formatter(zone)
    return true
  } catch {
    return false
  }
}

const OFFSET = /GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/

const exactOffset = (zone: string, instant: number): number => {
  const text = formatter(zone).format(Math.floor(instant) * 1000)
  const match = OFFSET.exec(text)
  if (match === null) throw new Error(`Unexpected time-zone offset in ${JSON.stringify(text)}`)
  if (match[1] === undefined) return 0
  const magnitude = Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4] ?? 0)
  return match[1] === "-" ? -magnitude : magnitude
}

// Offsets at the start of each UTC hour, per zone: an hour whose two ends agree has no transition
// inside (none changes twice within an hour), so most lookups are two map reads.
const hourStarts = new Map<string, Map<number, number>>()
const MAX_CACHED_HOURS = 200_000
// The last hour that starts and ends within the ECMAScript time range (±8.64e15 ms).
const LAST_WHOLE_HOUR = 8.64e12 / 3600 - 1

const offsetAtHour = (zone: string, cache: Map<number, number>, hour: number): number => {
  let offset = cache.get(hour)
  if (offset === undefined) {
    if (cache.size >= MAX_CACHED_HOURS) cache.clear()
    offset = exactOffset(zone, hour * 3600)
    cache.set(hour, offset)
  }
  return offset
}

/** The zone's UTC offset in seconds at an instant (epoch seconds). @since 0.1.0 */
export const offsetAt = (zone: string, instant: number): number => {
  let cache = hourStarts.get(zone)
  if (cache === undefined) {
    cache = new Map()
    hourStarts.set(zone, cache)
  }
  const hour = Math.floor(instant / 3600)
  if (hour > LAST_WHOLE_HOUR) return exactOffset(zone, instant)
  const start = offsetAtHour(zone, cache, hour)
  return start === offsetAtHour(zone, cache, hour + 1) ? start : exactOffset(zone, instant)
}

/**
 * The floating (wall-clock) time of an instant in a zone: its local date and time as if it were UTC,
 * in seconds since 1970-01-01T00:00. Only `resolve` turns one back into an instant.
 * @since 0.1.0
 */
export const toFloating = (zone: string, instant: number): number => instant + offsetAt(zone, instant)

/**
 * The instant (epoch seconds) of a floating time in a zone, by RFC 5545 §3.3.5: a repeated time takes
 * the earlier instant; a missing time moves forward by the gap's length.
 * @since 0.1.0
 */
export const resolve = (zone: string, floating: number): number => {
  const before = offsetAt(zone, floating - SECONDS_PER_DAY)
  const after = offsetAt(zone, floating + SECONDS_PER_DAY)
  const early = floating - before
  const earlyValid = offsetAt(zone, early) === before
  if (before === after) {
    if (earlyValid) return early
    // Two transitions within two days (no zone does this today): settle on a fixed point.
    const offset = offsetAt(zone, early)
    return offsetAt(zone, floating - offset) === offset ? floating - offset : early
  }
  const late = floating - after
  const lateValid = offsetAt(zone, late) === after
  if (earlyValid && lateValid) return Math.min(early, late)
  if (earlyValid) return early
  if (lateValid) return late
  return early
}

/** Drops every cached offset (for benchmarks that measure a cold start). @since 0.1.0 */
export const clearCache = (): void => {
  hourStarts.clear()
}
