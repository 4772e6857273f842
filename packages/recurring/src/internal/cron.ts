/**
 * Cron expressions parsed by cron-parser, compiled into bit sets and enumerated on the wall-clock
 * time line here: cron-parser's iterator is slow and does not follow the contract's DST rule.
 */

import { civilInto, daysInMonth, SECONDS_PER_DAY, weekdayOf } from "@waybill/core/Calendar"
import { CronExpressionParser } from "cron-parser"

/** An expression reduced to what matching needs. */
export interface Compiled {
  readonly expression: string
  /** Seconds after midnight of every matching time of day, ascending. */
  readonly times: ReadonlyArray<number>
  readonly months: number
  readonly daysOfMonth: number
  readonly lastDayOfMonth: boolean
  readonly dayOfMonthWildcard: boolean
  readonly daysOfWeek: number
  /** Weekdays matched on their last occurrence in the month (`5L`), when the field has `L`. */
  readonly lastWeekdays: number
  readonly nthWeekday: number
  readonly dayOfWeekWildcard: boolean
}

const WHITESPACE = /\s+/

/** The fields of an expression as written (after trimming). */
export const fieldsOf = (expression: string): Array<string> => {
  const trimmed = expression.trim()
  return trimmed === "" ? [] : trimmed.split(WHITESPACE)
}

/** Parses with cron-parser and builds the bit sets; throws what cron-parser throws. */
const build = (expression: string): Compiled => {
  // A fixed seed: `H` values must be the same in every process, or two generators disagree.
  const { fields } = CronExpressionParser.parse(expression, { tz: "UTC", hashSeed: expression })
  const times: Array<number> = []
  for (const hour of fields.hour.values) {
    for (const minute of fields.minute.values) {
      for (const second of fields.second.values) times.push(hour * 3600 + minute * 60 + second)
    }
  }
  times.sort((a, b) => a - b)
  let months = 0
  for (const month of fields.month.values) months |= 1 << month
  let daysOfMonth = 0
  for (const day of fields.dayOfMonth.values) if (typeof day === "number") daysOfMonth |= 1 << day
  let daysOfWeek = 0
  let lastWeekdays = 0
  for (const day of fields.dayOfWeek.values) {
    if (typeof day === "number") daysOfWeek |= 1 << (day % 7)
    // cron-parser reads the weekday of an `L` match from the first character of every value.
    lastWeekdays |= 1 << (Number.parseInt(String(day).charAt(0), 10) % 7)
  }
  return {
    expression,
    times,
    months,
    daysOfMonth,
    lastDayOfMonth: fields.dayOfMonth.hasLastChar,
    dayOfMonthWildcard: fields.dayOfMonth.isWildcard,
    daysOfWeek,
    lastWeekdays: fields.dayOfWeek.hasLastChar ? lastWeekdays : 0,
    nthWeekday: fields.dayOfWeek.nthDay,
    dayOfWeekWildcard: fields.dayOfWeek.isWildcard
  }
}

const cache = new Map<string, Compiled>()
const MAX_CACHED = 50_000

/** The compiled form of an expression, cached by its text; throws on an invalid one. */
export const compile = (expression: string): Compiled => {
  let compiled = cache.get(expression)
  if (compiled === undefined) {
    compiled = build(expression)
    if (cache.size >= MAX_CACHED) cache.clear()
    cache.set(expression, compiled)
  }
  return compiled
}

/** Drops every compiled expression. */
export const clearCache = (): void => {
  cache.clear()
}

/**
 * Whether a calendar day matches, with cron-parser's rules: day-of-month and day-of-week
 * combine with OR when both are restricted, a wildcard (`*`, `?`) defers to the other field.
 */
export const matchesDay = (compiled: Compiled, year: number, month: number, day: number, weekday: number): boolean => {
  if ((compiled.months & (1 << month)) === 0) return false
  const lastDay = daysInMonth(year, month)
  const dayOfMonth = (compiled.daysOfMonth & (1 << day)) !== 0 || (compiled.lastDayOfMonth && day === lastDay)
  const dayOfWeek =
    ((compiled.daysOfWeek & (1 << weekday)) !== 0 &&
      (compiled.nthWeekday <= 0 || Math.ceil(day / 7) === compiled.nthWeekday)) ||
    ((compiled.lastWeekdays & (1 << weekday)) !== 0 && day > lastDay - 7)
  if (!compiled.dayOfMonthWildcard && !compiled.dayOfWeekWildcard) return dayOfMonth || dayOfWeek
  if (compiled.dayOfWeekWildcard) return dayOfMonth
  return dayOfWeek
}

/** Whether the expression can match any calendar day at all (`0 0 30 2 *` cannot). */
export const canMatch = (compiled: Compiled): boolean => {
  // Every (month, day-of-month, weekday) combination recurs within 28 years; 2000 starts a leap
  // cycle, so 2000–2027 covers them all (including February 29 on every weekday).
  const start = 10_957 * SECONDS_PER_DAY // 2000-01-01
  const first: Array<number> = []
  enumerate(compiled, start, start + 10_228 * SECONDS_PER_DAY, first, 1)
  return first.length > 0
}

/**
 * Pushes every floating time in `[from, to)` that the expression matches, ascending. Stops early
 * once `limit` times have been pushed in all.
 */
export const enumerate = (
  compiled: Compiled,
  from: number,
  to: number,
  out: Array<number>,
  limit = Number.POSITIVE_INFINITY
): void => {
  if (to <= from) return
  const civil: [number, number, number] = [0, 0, 0]
  const times = compiled.times
  const lastDay = Math.floor((to - 1) / SECONDS_PER_DAY)
  for (let days = Math.floor(from / SECONDS_PER_DAY); days <= lastDay; days++) {
    civilInto(days, civil)
    if (!matchesDay(compiled, civil[0], civil[1], civil[2], weekdayOf(days))) continue
    const base = days * SECONDS_PER_DAY
    for (let i = 0; i < times.length; i++) {
      const time = base + times[i]!
      if (time < from) continue
      if (time >= to) break
      out.push(time)
      if (out.length >= limit) return
    }
  }
}
