import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Consumer from "../src/Consumer.js"

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
