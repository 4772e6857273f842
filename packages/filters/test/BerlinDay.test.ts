import { assert, describe, it } from "@effect/vitest"
import * as BerlinDay from "@waybill/filters/BerlinDay"
import * as Option from "effect/Option"
import * as fc from "fast-check"
import { withTimeZone } from "./timeZone.js"

const HOUR = 3_600_000
const day = (text: string) => Option.getOrThrow(BerlinDay.parseDate(text))

/**
 * An oracle that does not use `Intl`: the EU rule in force in Germany since 1996 (summer time
 * from 01:00 UTC on the last Sunday of March to 01:00 UTC on the last Sunday of October).
 */
const lastSunday = (year: number, month: number) => {
  const last = new Date(Date.UTC(year, month, 0))
  return Date.UTC(year, month - 1, last.getUTCDate() - last.getUTCDay(), 1)
}
const euOffset = (instant: number) => {
  const year = new Date(instant).getUTCFullYear()
  return instant >= lastSunday(year, 3) && instant < lastSunday(year, 10) ? 2 * HOUR : HOUR
}
/** The first instant of a Berlin day by the oracle: local midnight is never inside a transition. */
const euStart = (dayNumber: number) => {
  const midnight = dayNumber * 86_400_000
  return midnight - euOffset(midnight - euOffset(midnight))
}

describe("BerlinDay", () => {
  describe("calendar dates", () => {
    it("parses real YYYY-MM-DD dates only", () => {
      for (const text of ["2027-01-01", "2028-02-29", "2000-02-29", "0000-01-01", "9999-12-31", "1970-01-01"]) {
        assert.strictEqual(BerlinDay.formatDate(day(text)), text)
      }
      assert.strictEqual(day("1970-01-01"), 0)
      assert.strictEqual(day("1970-01-02"), 1)
      assert.strictEqual(day("1969-12-31"), -1)
      for (const text of [
        "2027-02-29",
        "1900-02-29",
        "2027-13-01",
        "2027-00-10",
        "2027-04-31",
        "2027-1-01",
        " 2027-01-01",
        "2027-01-01 ",
        "2027-01-01T00:00",
        "2027/01/01",
        "+2027-01-01",
        ""
      ]) {
        assert.isTrue(Option.isNone(BerlinDay.parseDate(text)), text)
      }
    })

    it("agrees with Date.UTC on day numbers", () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1000, max: 9999 }),
          fc.integer({ min: 1, max: 12 }),
          fc.integer({ min: 1, max: 28 }),
          (y, m, d) => {
            const expected = Date.UTC(y, m - 1, d) / 86_400_000
            assert.strictEqual(BerlinDay.fromCivil(y, m, d), expected)
            assert.deepStrictEqual(BerlinDay.toCivil(expected), { year: y, month: m, day: d })
          }
        )
      )
    })

    it("round-trips every day number", () => {
      fc.assert(
        fc.property(fc.integer({ min: -719_528, max: 2_932_896 }), (n) => {
          const civil = BerlinDay.toCivil(n)
          assert.strictEqual(BerlinDay.fromCivil(civil.year, civil.month, civil.day), n)
        })
      )
    })
  })

  describe("day bounds", () => {
    const dstDays = {
      "2026-03-29": 23,
      "2026-10-25": 25,
      "2027-03-28": 23,
      "2027-10-31": 25,
      "2030-03-31": 23,
      "2030-10-27": 25
    }

    for (const zone of [undefined, "UTC", "America/New_York", "Pacific/Chatham"]) {
      it(`are 23 or 25 hours long at DST changes, whatever the process zone (TZ=${zone ?? "unchanged"})`, () =>
        withTimeZone(zone, () => {
          for (const [text, hours] of Object.entries(dstDays)) {
            const bounds = BerlinDay.bounds(day(text))
            assert.strictEqual((bounds.end - bounds.start) / HOUR, hours, text)
          }
          // 2027-03-28 starts at 00:00 CET and ends at 00:00 CEST the next day.
          assert.deepStrictEqual(BerlinDay.bounds(day("2027-03-28")), {
            day: day("2027-03-28"),
            start: Date.parse("2027-03-27T23:00:00Z"),
            end: Date.parse("2027-03-28T22:00:00Z")
          })
          assert.deepStrictEqual(BerlinDay.bounds(day("2027-10-31")), {
            day: day("2027-10-31"),
            start: Date.parse("2027-10-30T22:00:00Z"),
            end: Date.parse("2027-10-31T23:00:00Z")
          })
        }))
    }

    it("match the EU rule on every day from 2020 to 2031, under UTC and New York too", () => {
      for (const zone of [undefined, "UTC", "America/New_York"]) {
        withTimeZone(zone, () => {
          for (let n = day("2020-01-01"); n <= day("2031-12-31"); n++) {
            const bounds = BerlinDay.bounds(n)
            assert.strictEqual(bounds.start, euStart(n), BerlinDay.formatDate(n))
            assert.strictEqual(bounds.end, euStart(n + 1), BerlinDay.formatDate(n))
          }
        })
      }
    })

    it("follow the historical rules of the time-zone database", () => {
      // Until 1995 summer time in Germany ended on the last Sunday of September.
      const bounds = BerlinDay.bounds(day("1990-09-30"))
      assert.strictEqual((bounds.end - bounds.start) / HOUR, 25)
      // Berlin kept local mean time (+00:53:28) until 1893-04-01.
      assert.strictEqual(BerlinDay.startOfDay(day("1890-06-01")), Date.parse("1890-06-01T00:00:00Z") - 3_208_000)
    })

    it("give the Berlin day of an instant", () => {
      assert.strictEqual(BerlinDay.dayOfInstant(Date.parse("2027-03-27T22:59:59.999Z")), day("2027-03-27"))
      assert.strictEqual(BerlinDay.dayOfInstant(Date.parse("2027-03-27T23:00:00Z")), day("2027-03-28"))
      assert.strictEqual(BerlinDay.dayOfInstant(Date.parse("2027-03-28T21:59:59.999Z")), day("2027-03-28"))
      assert.strictEqual(BerlinDay.dayOfInstant(Date.parse("2027-03-28T22:00:00Z")), day("2027-03-29"))
    })
  })

  describe("compare", () => {
    const spring = BerlinDay.bounds(day("2027-03-28"))
    const autumn = BerlinDay.bounds(day("2027-10-31"))
    const cases: ReadonlyArray<readonly [unknown, BerlinDay.DayBounds, number]> = [
      // epoch seconds
      [Date.parse("2027-03-27T22:59:59Z") / 1000, spring, -1],
      [Date.parse("2027-03-27T23:00:00Z") / 1000, spring, 0],
      [Date.parse("2027-03-28T21:59:59Z") / 1000, spring, 0],
      [Date.parse("2027-03-28T22:00:00Z") / 1000, spring, 1],
      [Date.parse("2027-10-31T22:30:00Z") / 1000, autumn, 0],
      [Date.parse("2027-10-31T23:00:00Z") / 1000, autumn, 1],
      // epoch milliseconds (≥ 10^12), the first and last millisecond of the day
      [Date.parse("2027-03-27T22:59:59.999Z"), spring, -1],
      [Date.parse("2027-03-27T23:00:00Z"), spring, 0],
      [Date.parse("2027-03-28T21:59:59.999Z"), spring, 0],
      [Date.parse("2027-03-28T22:00:00Z"), spring, 1],
      // just below the threshold is seconds: far in the future
      [999_999_999_999, spring, 1],
      [1e12, spring, -1],
      [0, spring, -1],
      [-1e9, spring, -1],
      // ISO-8601 with an offset: an instant
      ["2027-03-27T23:00:00Z", spring, 0],
      ["2027-03-27T22:59:59.999Z", spring, -1],
      ["2027-03-27T22:59:59.9999999999999999Z", spring, -1],
      ["2027-03-28T00:00:00+01:00", spring, 0],
      ["2027-03-28T23:59:59+02:00", spring, 0],
      ["2027-03-29T00:00:00+02:00", spring, 1],
      ["2027-03-28T00:00:00+0100", spring, 0],
      ["2027-03-28T00:00:00+01", spring, 0],
      ["2027-03-27T18:00:00-05:00", spring, 0],
      ["2027-03-27T17:59:59-05:00", spring, -1],
      ["2027-03-27t23:00:00z", spring, 0],
      ["2027-03-27 23:00:00Z", spring, 0],
      ["2027-03-27T23:00Z", spring, 0],
      ["2027-03-27T22:59:59,999Z", spring, -1],
      ["2027-10-31T23:30:00+01:00", autumn, 0],
      ["2027-10-31T02:30:00+02:00", autumn, 0],
      ["2027-10-31T02:30:00+01:00", autumn, 0],
      // a date, or a date-time without offset: a Berlin wall-clock date
      ["2027-03-28", spring, 0],
      ["2027-03-27", spring, -1],
      ["2027-03-29", spring, 1],
      ["2027-03-28T23:59:59", spring, 0],
      ["2027-03-28T02:30", spring, 0],
      ["2026-03-28", spring, -1],
      // not dates: NaN
      ["2027-02-30", spring, Number.NaN],
      ["2027-03-28T24:00:00Z", spring, Number.NaN],
      ["2027-03-28T12:60Z", spring, Number.NaN],
      ["2027-03-28T12:00:60Z", spring, Number.NaN],
      ["2027-03-28T12:00:00+24:00", spring, Number.NaN],
      ["2027-03-28T12:00:00+01:60", spring, Number.NaN],
      ["2027-03-28T12:00:00+1", spring, Number.NaN],
      ["2027-03-28T12", spring, Number.NaN],
      ["2027-03-28Z", spring, Number.NaN],
      ["2027-03-28T12:00:00.Z", spring, Number.NaN],
      ["2027-03-28T12:00:00ZZ", spring, Number.NaN],
      ["2027-03-28x", spring, Number.NaN],
      ["20270328", spring, Number.NaN],
      ["", spring, Number.NaN],
      ["tomorrow", spring, Number.NaN],
      [Number.NaN, spring, Number.NaN],
      [Number.POSITIVE_INFINITY, spring, Number.NaN],
      [1e20, spring, Number.NaN],
      [true, spring, Number.NaN],
      [null, spring, Number.NaN],
      [undefined, spring, Number.NaN],
      [{}, spring, Number.NaN],
      [[1806188400], spring, Number.NaN]
    ]

    it("places epoch seconds, epoch milliseconds and ISO-8601 strings relative to a Berlin day", () => {
      for (const [value, bounds, expected] of cases) {
        const actual = BerlinDay.compare(value, bounds)
        if (Number.isNaN(expected)) assert.isNaN(actual, JSON.stringify(value))
        else assert.strictEqual(actual, expected, JSON.stringify(value))
      }
    })

    it("agrees with dayOf", () => {
      for (const [value, bounds, expected] of cases) {
        const found = BerlinDay.dayOf(value)
        if (Number.isNaN(expected) || bounds !== spring) continue
        assert.isTrue(Option.isSome(found), JSON.stringify(value))
        const position = Option.getOrThrow(found) - bounds.day
        assert.strictEqual(Math.sign(position), expected, JSON.stringify(value))
      }
      assert.isTrue(Option.isNone(BerlinDay.dayOf("2027-02-30")))
      assert.isTrue(Option.isNone(BerlinDay.dayOf(1e20)))
      assert.isTrue(Option.isNone(BerlinDay.dayOf(true)))
      assert.deepStrictEqual(BerlinDay.dayOf("2027-03-27T23:00:00Z"), Option.some(day("2027-03-28")))
      assert.deepStrictEqual(BerlinDay.dayOf(1_806_188_400), Option.some(day("2027-03-28")))
    })
  })
})
