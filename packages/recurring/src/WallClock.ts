/**
 * The one wall-clock resolver, `(local date, time, zone) → instant`, by RFC 5545's rule and
 * independent of the process time zone (docs/recurring.md, Time: one resolver).
 * @since 0.1.0
 */
import * as Calendar from "@waybill/core/Calendar"

/** A calendar day, `YYYY-MM-DD`. @since 0.1.0 */
export type LocalDate = string

/** Lower-case three-letter weekday keys, Monday first, as `weekdayTimeOffsets` uses them. @since 0.1.0 */
export type Weekday = "mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun"

/** The weekday keys in order, Monday first. @since 0.1.0 */
export const weekdays: ReadonlyArray<Weekday> = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

const BY_JS_DAY: ReadonlyArray<Weekday> = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
const NAMES: Readonly<Record<Weekday, string>> = {
  mon: "Monday",
  tue: "Tuesday",
  wed: "Wednesday",
  thu: "Thursday",
  fri: "Friday",
  sat: "Saturday",
  sun: "Sunday"
}

/** Whether a string is an IANA time-zone name the runtime knows; bare offsets (`+01:00`) are not. @since 0.1.0 */
export const isTimeZone = (value: string): boolean => Calendar.isTimeZone(value)

/**
 * The instant (epoch seconds) of a date and `HH:MM` time plus `plusMinutes` wall-clock minutes in
 * a zone: an overlap gives the earlier instant, a gap moves forward by its length. Throws a
 * `RangeError` on a malformed date or time; the zone must be valid.
 * @since 0.1.0
 */
export const resolve = (date: LocalDate, time: string, timeZone: string, plusMinutes = 0): number => {
  const days = Calendar.parseDate(date)
  const minutes = Calendar.parseTime(time)
  if (days === undefined) throw new RangeError(`Not a calendar date: ${date}`)
  if (minutes === undefined) throw new RangeError(`Not a 24-hour HH:MM time: ${time}`)
  return Calendar.resolve(timeZone, days * Calendar.SECONDS_PER_DAY + (minutes + plusMinutes) * 60)
}

/** The calendar day of an instant (epoch seconds) in a zone. @since 0.1.0 */
export const localDate = (instant: number, timeZone: string): LocalDate =>
  Calendar.formatDate(Math.floor(Calendar.toFloating(timeZone, instant) / Calendar.SECONDS_PER_DAY))

/** The wall-clock time `HH:MM:SS` of an instant (epoch seconds) in a zone. @since 0.1.0 */
export const localTime = (instant: number, timeZone: string): string => {
  const seconds =
    ((Calendar.toFloating(timeZone, Math.floor(instant)) % Calendar.SECONDS_PER_DAY) + Calendar.SECONDS_PER_DAY) %
    Calendar.SECONDS_PER_DAY
  const pad = (value: number) => String(value).padStart(2, "0")
  return `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}`
}

/** The same wall-clock time `days` calendar days later in the zone (never `+ days × 86400`). @since 0.1.0 */
export const addCalendarDays = (instant: number, days: number, timeZone: string): number =>
  Calendar.resolve(timeZone, Calendar.toFloating(timeZone, Math.floor(instant)) + days * Calendar.SECONDS_PER_DAY)

/** The weekday key of a calendar day. @since 0.1.0 */
export const weekdayOf = (date: LocalDate): Weekday => {
  const days = Calendar.parseDate(date)
  if (days === undefined) throw new RangeError(`Not a calendar date: ${date}`)
  return BY_JS_DAY[Calendar.weekdayOf(days)]!
}

/** The English name of a weekday (`Monday`). @since 0.1.0 */
export const weekdayName = (weekday: Weekday): string => NAMES[weekday]
