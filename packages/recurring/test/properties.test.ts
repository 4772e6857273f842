import { assert, describe, it } from "@effect/vitest"
import { CronExpressionParser } from "cron-parser"
import { Schema } from "effect"
import * as fc from "fast-check"
import * as Occurrence from "../src/Occurrence.js"
import * as Schedule from "../src/Schedule.js"
import * as WallClock from "../src/WallClock.js"
import { master } from "./fixtures.js"

const ZONES = [
  "UTC",
  "Europe/Berlin",
  "America/New_York",
  "Australia/Lord_Howe",
  "Pacific/Chatham",
  "America/Santiago",
  "Asia/Kathmandu",
  "Pacific/Kiritimati"
]

const pick = <A>(values: ReadonlyArray<A>) => fc.constantFrom(...values)

// Fields built to stay cheap to iterate (few matches per day) but cover cron-parser's syntax.
const minute = fc.oneof(
  fc.integer({ min: 0, max: 59 }).map(String),
  fc.tuple(fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 })).map(([a, b]) => `${a},${b}`),
  fc.integer({ min: 20, max: 30 }).map((step) => `*/${step}`)
)
const hour = fc.oneof(
  fc.integer({ min: 0, max: 23 }).map(String),
  fc
    .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 23 }))
    .map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
  fc.integer({ min: 5, max: 12 }).map((step) => `*/${step}`),
  fc.constant("*")
)
const dayOfMonth = fc.oneof(
  fc.constant("*"),
  fc.integer({ min: 1, max: 31 }).map(String),
  fc
    .tuple(fc.integer({ min: 1, max: 28 }), fc.integer({ min: 1, max: 28 }))
    .map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
  fc.constant("L"),
  fc.integer({ min: 1, max: 28 }).map((day) => `${day},L`),
  fc.integer({ min: 2, max: 10 }).map((step) => `*/${step}`)
)
const month = fc.oneof(
  fc.constant("*"),
  fc.integer({ min: 1, max: 12 }).map(String),
  pick(["1-6", "JAN,MAR", "*/2", "2", "FEB-APR"])
)
const dayOfWeek = fc.oneof(
  fc.constant("*"),
  fc.integer({ min: 0, max: 7 }).map(String),
  pick(["1-5", "MON-FRI", "SAT,SUN", "0,6", "5L", "1L", "2#1", "5#3", "0#5", "THU", "*/2"])
)
const expression = fc
  .tuple(minute, hour, dayOfMonth, month, dayOfWeek)
  .map((fields) => fields.join(" "))
  .filter((text) => Schedule.checkCronExpression(text) === undefined)

const instant = fc.integer({ min: Date.UTC(2025, 0, 1) / 1000, max: Date.UTC(2035, 0, 1) / 1000 })

const decode = Schema.decodeUnknownSync(Schedule.RecurringSchedule)

/** cron-parser's own iteration in UTC, where it has no DST to get wrong: the reference. */
const cronParserUtc = (text: string, from: number, to: number): Array<number> => {
  const iterator = CronExpressionParser.parse(text, {
    tz: "UTC",
    currentDate: (from - 1) * 1000,
    endDate: (to - 1) * 1000
  })
  const out: Array<number> = []
  for (;;) {
    try {
      out.push(iterator.next().getTime() / 1000)
    } catch {
      return out
    }
  }
}

describe("properties", () => {
  it("our enumeration matches cron-parser's iteration in UTC (same expressions, same window)", () => {
    fc.assert(
      fc.property(expression, instant, fc.integer({ min: 1, max: 10 * 86_400 }), (text, from, length) => {
        const schedule = decode({ cronExpressions: [text], timezone: "UTC", leadTimeDays: 0 })
        assert.deepStrictEqual(
          Schedule.triggers(schedule, from, from + length),
          cronParserUtc(text, from, from + length)
        )
      }),
      { numRuns: 300 }
    )
  })

  it("every trigger lies in the window, is unique, any split of a range gives the same set, and a bounded search its prefix", () => {
    fc.assert(
      fc.property(
        fc.array(expression, { minLength: 1, maxLength: 3 }),
        pick(ZONES),
        instant,
        fc.integer({ min: 1, max: 40 * 86_400 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 5 }),
        fc.option(
          fc.tuple(fc.integer({ min: -20 * 86_400, max: 20 * 86_400 }), fc.integer({ min: 1, max: 40 * 86_400 }))
        ),
        fc.integer({ min: 1, max: 6 }),
        (cronExpressions, timezone, from, length, cuts, window, limit) => {
          const to = from + length
          const schedule = decode({
            cronExpressions,
            timezone,
            leadTimeDays: 0,
            ...(window === null ? {} : { startsAt: from + window[0], endsAt: from + window[0] + window[1] })
          })
          const whole = Schedule.triggers(schedule, from, to)
          const low = Math.max(from, schedule.startsAt ?? from)
          const high = Math.min(to, schedule.endsAt ?? to)
          for (let i = 0; i < whole.length; i++) {
            assert.isTrue(whole[i]! >= low && whole[i]! < high, "inside [from, to) ∩ [startsAt, endsAt)")
            if (i > 0) assert.isTrue(whole[i]! > whole[i - 1]!, "ascending and unique")
          }
          const points = [from, ...cuts.map((cut) => from + Math.floor(cut * length)).sort((a, b) => a - b), to]
          const pieces = points.slice(1).flatMap((end, i) => Schedule.triggers(schedule, points[i]!, end))
          assert.deepStrictEqual(pieces, whole)
          // The bounded search (slice by slice) finds exactly the first ones.
          const m = master({ schedule: { ...schedule } })
          assert.deepStrictEqual(Occurrence.triggerInstants(m, from, to, limit), whole.slice(0, limit))
        }
      ),
      { numRuns: 300 }
    )
  })

  it("the resolver round-trips every existing wall-clock time to its earliest instant", () => {
    fc.assert(
      fc.property(pick(ZONES), instant, (zone, t) => {
        const date = WallClock.localDate(t, zone)
        const time = WallClock.localTime(t, zone)
        const seconds = Number(time.slice(6, 8))
        const resolved = WallClock.resolve(date, time.slice(0, 5), zone) + seconds
        assert.isTrue(resolved <= t, "never later than an instant with that wall-clock time")
        assert.isTrue(t - resolved <= 3 * 3600, "at most one overlap earlier")
        assert.strictEqual(WallClock.localDate(resolved, zone), date)
        assert.strictEqual(WallClock.localTime(resolved, zone), time)
      }),
      { numRuns: 2000 }
    )
  })
})
