/**
 * Trigger instants of a set of expressions in a zone: enumerate matches on the floating
 * (wall-clock) time line, resolve each with the one rule, keep those in the window, dedupe.
 */

import * as Calendar from "@waybill/core/Calendar"
import * as cron from "./cron.js"

// Wall-clock times of instants in [from, to) lie within [from + offset, to + offset] up to the
// size of a transition near the edges; no zone shifts by more than 3 hours any more.
const MARGIN = 3 * 3600

const sortUnique = (values: Array<number>): Array<number> => {
  values.sort((a, b) => a - b)
  let write = 0
  for (let read = 0; read < values.length; read++) {
    if (write === 0 || values[read] !== values[write - 1]) values[write++] = values[read]!
  }
  values.length = write
  return values
}

/** Trigger instants in `[from, to)`, ascending and unique, in one pass. */
export const between = (
  expressions: ReadonlyArray<cron.Compiled>,
  timeZone: string,
  from: number,
  to: number
): Array<number> => {
  const out: Array<number> = []
  if (to <= from) return out
  const offsetFrom = Calendar.offsetAt(timeZone, from)
  const offsetTo = Calendar.offsetAt(timeZone, to)
  const floatingFrom = from + Math.min(offsetFrom, offsetTo) - MARGIN
  const floatingTo = to + Math.max(offsetFrom, offsetTo) + MARGIN
  const wall: Array<number> = []
  for (const expression of expressions) {
    wall.length = 0
    cron.enumerate(expression, floatingFrom, floatingTo, wall)
    for (const time of wall) {
      const instant = Calendar.resolve(timeZone, time)
      if (instant >= from && instant < to) out.push(instant)
    }
  }
  return sortUnique(out)
}

/**
 * At most `limit` first trigger instants in `[from, to)`, found in slices doubling from one hour
 * to 64 days, so a far `to` costs only what is needed.
 */
export const first = (
  expressions: ReadonlyArray<cron.Compiled>,
  timeZone: string,
  from: number,
  to: number,
  limit: number
): Array<number> => {
  const out: Array<number> = []
  let start = from
  let span = 3600
  while (start < to && out.length < limit) {
    const end = Math.min(to, start + span)
    for (const instant of between(expressions, timeZone, start, end)) out.push(instant)
    start = end
    span = Math.min(span * 2, 64 * Calendar.SECONDS_PER_DAY)
  }
  if (out.length > limit) out.length = limit
  return out
}
