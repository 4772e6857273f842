/**
 * Calendar arithmetic and time-zone offsets, independent of the process time zone.
 *
 * A "floating" time is a wall-clock time written as if it were UTC: seconds since
 * 1970-01-01T00:00 of the local calendar. Calendar arithmetic (add N days, set a time of day)
 * is plain integer arithmetic on floating times; only `resolve` turns one into an instant.
 */

/** Seconds in a calendar day of the floating (wall-clock) time line. */
export const DAY = 86_400

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
export const daysFromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

/** The year, month (1–12) and day of a day number; writes into `out` to avoid allocation. */
export const civilFromDays = (days: number, out: [number, number, number]): [number, number, number] => {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const month = mp < 10 ? mp + 3 : mp - 9
  out[0] = yoe + era * 400 + (month <= 2 ? 1 : 0)
  out[1] = month
  out[2] = doy - Math.floor((153 * mp + 2) / 5) + 1
  return out
}

/** Day of the week of a day number: 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday). */
export const weekdayOfDays = (days: number): number => (((days + 4) % 7) + 7) % 7

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** Days in a month (1–12) of a year. */
export const daysInMonth = (year: number, month: number): number =>
  month === 2 && isLeapYear(year) ? 29 : MONTH_DAYS[month - 1]!

const pad = (value: number, width: number): string => String(value).padStart(width, "0")

/** `YYYY-MM-DD` of a day number. */
export const formatDays = (days: number): string => {
  const civil = civilFromDays(days, [0, 0, 0])
  return `${pad(civil[0], 4)}-${pad(civil[1], 2)}-${pad(civil[2], 2)}`
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/

/** The day number of a `YYYY-MM-DD` date, or `undefined` when it is not a real date. */
export const parseDate = (date: string): number | undefined => {
  const match = DATE.exec(date)
  if (match === null) return undefined
  const year = Number(match[1])
  const month = Number(match[2])
  const day = Number(match[3])
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
  return daysFromCivil(year, month, day)
}

const TIME = /^([01]\d|2[0-3]):([0-5]\d)$/

/** Minutes after midnight of a 24-hour `HH:MM` time, or `undefined`. */
export const parseTime = (time: string): number | undefined => {
  const match = TIME.exec(time)
  return match === null ? undefined : Number(match[1]) * 60 + Number(match[2])
}

// An IANA name: letters, digits and `_+-/`; this refuses the bare offsets (`+01:00`) newer ICU accepts.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/

// Bounded: ICU accepts every case variant of a name ("EUROPE/berlin"), so keys are not a fixed set.
const MAX_ZONES = 1000
const formatters = new Map<string, Intl.DateTimeFormat>()

const formatter = (zone: string): Intl.DateTimeFormat => {
  let format = formatters.get(zone)
  if (format === undefined) {
    if (formatters.size >= MAX_ZONES) {
      formatters.clear()
      hourStarts.clear()
    }
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric"
    })
    formatters.set(zone, format)
  }
  return format
}

/** Whether `zone` is an IANA time-zone name this runtime knows. Never throws. */
export const isValidZone = (zone: string): boolean => {
  if (zone.length === 0 || zone.length > 64 || !ZONE_NAME.test(zone)) return false
  if (formatters.has(zone)) return true
  try {
    formatter(zone)
    return true
  } catch {
    return false
  }
}

/** The zone's UTC offset in seconds at an instant, straight from ICU (slow: a few µs). */
const exactOffset = (zone: string, instant: number): number => {
  let year = 0
  let month = 0
  let day = 0
  let hour = 0
  let minute = 0
  let second = 0
  for (const part of formatter(zone).formatToParts(instant * 1000)) {
    switch (part.type) {
      case "year":
        year = Number(part.value)
        break
      case "month":
        month = Number(part.value)
        break
      case "day":
        day = Number(part.value)
        break
      case "hour":
        hour = Number(part.value)
        break
      case "minute":
        minute = Number(part.value)
        break
      case "second":
        second = Number(part.value)
        break
    }
  }
  return daysFromCivil(year, month, day) * DAY + hour * 3600 + minute * 60 + second - Math.floor(instant)
}

// Offsets at the start of each UTC hour, per zone. An hour whose two ends agree has no transition
// inside (no zone changes its offset twice within an hour), so most lookups are two map reads.
const hourStarts = new Map<string, Map<number, number>>()
const MAX_CACHED_HOURS = 200_000

const offsetAtHour = (zone: string, cache: Map<number, number>, hour: number): number => {
  let offset = cache.get(hour)
  if (offset === undefined) {
    if (cache.size >= MAX_CACHED_HOURS) cache.clear()
    offset = exactOffset(zone, hour * 3600)
    cache.set(hour, offset)
  }
  return offset
}

/** The zone's UTC offset in seconds at an instant (epoch seconds). */
export const offsetAt = (zone: string, instant: number): number => {
  let cache = hourStarts.get(zone)
  if (cache === undefined) {
    cache = new Map()
    hourStarts.set(zone, cache)
  }
  const hour = Math.floor(instant / 3600)
  const start = offsetAtHour(zone, cache, hour)
  return start === offsetAtHour(zone, cache, hour + 1) ? start : exactOffset(zone, instant)
}

/** The floating (wall-clock) time of an instant in a zone. */
export const toFloating = (zone: string, instant: number): number => instant + offsetAt(zone, instant)

/**
 * The instant of a floating (wall-clock) time in a zone, by the contract's rule (RFC 5545
 * §3.3.5): a time that exists once is that instant; a repeated time (overlap) takes the earlier
 * instant; a missing time (gap, whatever its length) is read with the offset before the gap,
 * which moves it forward by the gap's length.
 */
export const resolve = (zone: string, floating: number): number => {
  const before = offsetAt(zone, floating - DAY)
  const after = offsetAt(zone, floating + DAY)
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

/** Drops every cached offset (for benchmarks that measure a cold start). */
export const clearCache = (): void => {
  hourStarts.clear()
}
