import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Calendar from "../src/Calendar.js"

const BERLIN = "Europe/Berlin"

describe("Calendar", () => {
  it("day numbers and dates round trip, with the weekday of each", () => {
    fc.assert(
      fc.property(fc.integer({ min: Calendar.fromCivil(0, 1, 1), max: Calendar.fromCivil(9999, 12, 31) }), (days) => {
        const { year, month, day } = Calendar.toCivil(days)
        assert.strictEqual(Calendar.fromCivil(year, month, day), days)
        assert.strictEqual(Calendar.parseDate(Calendar.formatDate(days)), days)
        const date = new Date(0)
        date.setUTCFullYear(year, month - 1, day)
        assert.strictEqual(Calendar.weekdayOf(days), date.getUTCDay())
      })
    )
  })

  it("parses real dates and 24-hour times only", () => {
    assert.strictEqual(Calendar.parseDate("1970-01-01"), 0)
    assert.strictEqual(Calendar.parseDate("2028-02-29"), Calendar.fromCivil(2028, 2, 29))
    for (const text of ["2027-02-29", "2027-13-01", "2027-1-01", "2027-01-01T00:00", "２０２７-01-01"]) {
      assert.isUndefined(Calendar.parseDate(text), text)
    }
    assert.strictEqual(Calendar.parseTime("23:59"), 23 * 60 + 59)
    for (const text of ["24:00", "7:30", "07:60", "07-30"]) assert.isUndefined(Calendar.parseTime(text), text)
  })

  it("reads a zone's offset in any year, local mean time included", () => {
    assert.strictEqual(Calendar.offsetAt(BERLIN, Date.UTC(2027, 0, 15) / 1000), 3600)
    assert.strictEqual(Calendar.offsetAt(BERLIN, Date.UTC(2027, 6, 15) / 1000), 7200)
    // Year 0 (1 BC): Berlin's local mean time, +00:53:28.
    assert.strictEqual(Calendar.offsetAt(BERLIN, Calendar.fromCivil(0, 6, 1) * Calendar.SECONDS_PER_DAY), 3208)
    assert.strictEqual(Calendar.offsetAt("America/New_York", Date.UTC(2027, 0, 15) / 1000), -5 * 3600)
    // The last instant of the ECMAScript range (13 September 275760, summer time) has an offset too.
    assert.strictEqual(Calendar.offsetAt(BERLIN, 8.64e12), 7200)
  })

  it("resolves wall-clock times by RFC 5545: a gap moves forward, an overlap takes the earlier instant", () => {
    const day = Calendar.fromCivil(2027, 3, 28) * Calendar.SECONDS_PER_DAY
    assert.strictEqual(Calendar.resolve(BERLIN, day + 2.5 * 3600), Date.UTC(2027, 2, 28, 1, 30) / 1000)
    const autumn = Calendar.fromCivil(2027, 10, 31) * Calendar.SECONDS_PER_DAY
    assert.strictEqual(Calendar.resolve(BERLIN, autumn + 2.5 * 3600), Date.UTC(2027, 9, 31, 0, 30) / 1000)
    const instant = Date.UTC(2027, 4, 1, 10) / 1000
    assert.strictEqual(Calendar.resolve(BERLIN, Calendar.toFloating(BERLIN, instant)), instant)
  })

  it("knows IANA names and refuses bare offsets and junk", () => {
    assert.isTrue(Calendar.isTimeZone(BERLIN))
    assert.isTrue(Calendar.isTimeZone("UTC"))
    for (const zone of ["+01:00", "", "Mars/Olympus", "Europe/../Berlin"]) assert.isFalse(Calendar.isTimeZone(zone))
  })
})
