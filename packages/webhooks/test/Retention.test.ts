import { assert, describe, it } from "@effect/vitest"
import * as Retention from "@waybill/webhooks/Retention"
import { Either } from "effect"

const minute = 60_000
const day = 24 * 60 * minute

describe("Retention", () => {
  it("reads WAYBILL_RETENTION as days, hours or minutes, or 0 to keep everything; refuses the rest", () => {
    assert.deepStrictEqual(Retention.parse("30d"), Either.right(30 * day))
    assert.deepStrictEqual(Retention.parse("12h"), Either.right(12 * 60 * minute))
    assert.deepStrictEqual(Retention.parse("2m"), Either.right(2 * minute))
    assert.deepStrictEqual(Retention.parse("0"), Either.right(0))
    for (const bad of ["", "30", "30s", "-1d", "1.5d", "0d", "d", "3651d", "30 days"]) {
      assert.isTrue(Either.isLeft(Retention.parse(bad)), bad)
    }
    assert.strictEqual(Retention.format(30 * day), "30d")
    assert.strictEqual(Retention.format(90 * minute), "90m")
    assert.strictEqual(Retention.format(0), "0")
  })

  it("sizes ranges at a tenth of the window and runs at least once a range, at most a minute apart", () => {
    assert.strictEqual(Retention.rangeMs(30 * day), 3 * day)
    assert.strictEqual(Retention.rangeMs(2 * minute), 12_000)
    assert.strictEqual(Retention.rangeMs(0), 3 * day)
    assert.strictEqual(Retention.intervalMs(2 * minute), 12_000)
    assert.strictEqual(Retention.intervalMs(30 * day), minute)
    assert.strictEqual(Retention.aheadMs(2 * minute), 2 * minute)
    assert.strictEqual(Retention.aheadMs(30 * day), 9 * day)
  })

  it("plans aligned ranges ahead from the newest one, one range over a gap, and drops what the window left", () => {
    const now = 1_798_000_000_000
    const size = 12_000
    const start = Math.floor(now / size) * size
    // Fresh: from the present, aligned, two minutes ahead.
    const fresh = Retention.plan([{ from: null, to: start - minute }], now, 2 * minute)
    assert.deepStrictEqual(fresh.create[0], { from: start - minute, to: start })
    assert.strictEqual(fresh.create[1]!.from, start)
    for (const range of fresh.create.slice(1)) {
      assert.strictEqual(range.to - range.from!, size)
      assert.strictEqual(range.from! % size, 0)
    }
    assert.isAtLeast(fresh.create.at(-1)!.to, now + 2 * minute)
    assert.deepStrictEqual(fresh.drop, [])
    assert.strictEqual(fresh.trimBelow, now - 2 * minute)
    // The range of everything before goes whole once wholly older than the window.
    assert.deepStrictEqual(Retention.plan([{ from: null, to: start - 5 * minute }], now, 2 * minute).drop, [
      { from: null, to: start - 5 * minute }
    ])
    // Ranges wholly older than the window go; the one holding the cutoff stays.
    const ranges = [
      { from: null, to: start - 10 * size },
      { from: start - 10 * size, to: start - 9 * size },
      { from: start - 9 * size, to: start + 20 * size }
    ]
    const later = Retention.plan(ranges, start + 2 * minute + 2 * size, 2 * minute)
    assert.deepStrictEqual(later.drop, [ranges[0], ranges[1]])
    assert.strictEqual(later.trimBelow, null)
    // Keeping everything drops nothing.
    assert.deepStrictEqual(Retention.plan(ranges, now + 365 * day, 0).drop, [])
  })

  it("says how many expired, starting with expired", () => {
    assert.strictEqual(
      Retention.expiryReason(3, 2 * minute),
      "expired: 3 deliveries not delivered within the retention of 2m"
    )
    assert.match(Retention.expiryReason(1, 30 * day), /^expired: 1 delivery /)
  })
})
