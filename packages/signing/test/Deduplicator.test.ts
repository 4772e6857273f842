import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Deduplicator from "../src/Deduplicator.js"

describe("Deduplicator", () => {
  it("answers false the first time and true on a repeat", () => {
    const dedupe = Deduplicator.make({ capacity: 10 })
    assert.isFalse(dedupe.seen("dlv_a"))
    assert.isTrue(dedupe.seen("dlv_a"))
    assert.isFalse(dedupe.seen("dlv_b"))
    assert.strictEqual(dedupe.size(), 2)
  })

  it("evicts the least recently seen id beyond capacity", () => {
    const dedupe = Deduplicator.make({ capacity: 2 })
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
    const dedupe = Deduplicator.make({ capacity: 4 })
    assert.isFalse(dedupe.seen("dlv_x"))
    dedupe.forget("dlv_x")
    assert.isFalse(dedupe.seen("dlv_x"))
  })

  it("refuses a capacity that is not a positive integer", () => {
    assert.throws(() => Deduplicator.make({ capacity: 0 }))
    assert.throws(() => Deduplicator.make({ capacity: 1.5 }))
  })

  it("never answers true for an id not seen, and always for the last `capacity` distinct ids", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.constantFrom("a", "b", "c", "d", "e", "f")),
        (capacity, ids) => {
          const dedupe = Deduplicator.make({ capacity })
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
