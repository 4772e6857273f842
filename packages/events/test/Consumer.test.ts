import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Consumer from "../src/Consumer.js"

describe("Consumer.makeDeduplicator", () => {
  it("answers false the first time and true on a repeat", () => {
    const dedupe = Consumer.makeDeduplicator({ capacity: 10 })
    assert.isFalse(dedupe.seen("dlv_a"))
    assert.isTrue(dedupe.seen("dlv_a"))
    assert.isFalse(dedupe.seen("dlv_b"))
    assert.strictEqual(dedupe.size(), 2)
  })

  it("evicts the least recently seen id beyond capacity", () => {
    const dedupe = Consumer.makeDeduplicator({ capacity: 2 })
    dedupe.seen("a")
    dedupe.seen("b")
    dedupe.seen("a") // refreshes a
    dedupe.seen("c") // evicts b
    assert.isTrue(dedupe.has("a"))
    assert.isFalse(dedupe.has("b"))
    assert.isTrue(dedupe.has("c"))
    assert.strictEqual(dedupe.size(), 2)
  })

  it("forget lets a retry through", () => {
    const dedupe = Consumer.makeDeduplicator({ capacity: 4 })
    assert.isFalse(dedupe.seen("dlv_x"))
    dedupe.forget("dlv_x")
    assert.isFalse(dedupe.seen("dlv_x"))
  })

  it("refuses a capacity that is not a positive integer", () => {
    assert.throws(() => Consumer.makeDeduplicator({ capacity: 0 }))
    assert.throws(() => Consumer.makeDeduplicator({ capacity: 1.5 }))
  })

  it("never answers true for an id not seen, and always for the last `capacity` distinct ids", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.constantFrom("a", "b", "c", "d", "e", "f")),
        (capacity, ids) => {
          const dedupe = Consumer.makeDeduplicator({ capacity })
          const recent: Array<string> = []
          for (const id of ids) {
            const expected = recent.includes(id)
            assert.strictEqual(dedupe.seen(id), expected)
            const at = recent.indexOf(id)
            if (at >= 0) recent.splice(at, 1)
            recent.push(id)
            if (recent.length > capacity) recent.shift()
            assert.isAtMost(dedupe.size(), capacity)
          }
        }
      )
    )
  })
})

describe("Consumer timestamps and loads", () => {
  it("reads a callout createdAt below 10^12 as seconds", () => {
    assert.strictEqual(Consumer.calloutCreatedAtMillis(1_798_000_000), 1_798_000_000_000)
    assert.strictEqual(Consumer.calloutCreatedAtMillis(1_798_000_000_123), 1_798_000_000_123)
    assert.strictEqual(Consumer.calloutCreatedAtMillis(999_999_999_999), 999_999_999_999_000)
    assert.strictEqual(Consumer.calloutCreatedAtMillis(1_000_000_000_000), 1_000_000_000_000)
    const payload = { callouts: [], action: { id: "a", createdAt: 1_798_000_000, createdAtMilliseconds: 1 } }
    assert.strictEqual(Consumer.normalizeCalloutAction(payload).action.createdAt, 1_798_000_000_000)
    assert.strictEqual(payload.action.createdAt, 1_798_000_000, "input untouched")
  })

  it("property: old (seconds) and new (milliseconds) deliveries of one instant agree", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1_000_000_000, max: 4_000_000_000 }), (seconds) => {
        assert.strictEqual(Consumer.calloutCreatedAtMillis(seconds), Consumer.calloutCreatedAtMillis(seconds * 1000))
      })
    )
  })

  it("tells a terminal loss from a return", () => {
    assert.isTrue(Consumer.isTerminalLoss({ status: "Perished" }))
    assert.isFalse(Consumer.isTerminalLoss({ status: "Returned" }))
    assert.isFalse(Consumer.isTerminalLoss({}))
    assert.isTrue(Consumer.isReturned({ status: "Returned" }))
    assert.isFalse(Consumer.isReturned({ status: "Perished" }))
  })
})
