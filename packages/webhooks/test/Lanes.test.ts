import { assert, describe, it } from "@effect/vitest"
import * as Lanes from "../src/internal/lanes.js"

const takeAll = (lanes: Lanes.Lanes<string>) => {
  const out: Array<string> = []
  for (let next = lanes.take(); next !== undefined; next = lanes.take()) out.push(next)
  return out
}

describe("Lanes", () => {
  it("serves ready keys in turn, oldest item of each first", () => {
    const lanes = Lanes.make<string>(10)
    for (const item of ["a1", "a2", "a3"]) lanes.push("a", item)
    for (const item of ["b1", "b2"]) lanes.push("b", item)
    lanes.push("c", "c1")
    assert.deepStrictEqual(takeAll(lanes), ["a1", "b1", "c1", "a2", "b2", "a3"])
  })

  it("takes at most `perKey` items of one key until they are released", () => {
    const lanes = Lanes.make<string>(2)
    for (const item of ["a1", "a2", "a3", "a4"]) lanes.push("a", item)
    lanes.push("b", "b1")
    assert.deepStrictEqual(takeAll(lanes), ["a1", "b1", "a2"])
    assert.strictEqual(lanes.heldBy("a"), 4)
    lanes.release("a")
    assert.strictEqual(lanes.heldBy("a"), 3)
    assert.deepStrictEqual(takeAll(lanes), ["a3"])
    lanes.release("a")
    lanes.release("a")
    assert.deepStrictEqual(takeAll(lanes), ["a4"])
  })

  it("counts what is waiting or taken, per key and in all, and forgets a finished key", () => {
    const lanes = Lanes.make<string>(1)
    lanes.push("a", "a1")
    lanes.push("a", "a2")
    lanes.push("b", "b1")
    assert.strictEqual(lanes.held(), 3)
    assert.deepStrictEqual(
      [...lanes.heldByKey()],
      [
        ["a", 2],
        ["b", 1]
      ]
    )
    assert.deepStrictEqual(takeAll(lanes), ["a1", "b1"])
    lanes.release("b")
    assert.strictEqual(lanes.heldBy("b"), 0)
    assert.deepStrictEqual([...lanes.heldByKey()], [["a", 2]])
    lanes.release("b")
    assert.strictEqual(lanes.held(), 2, "releasing a key with nothing taken changes nothing")
    lanes.release("a")
    assert.deepStrictEqual(takeAll(lanes), ["a2"])
    lanes.release("a")
    assert.strictEqual(lanes.held(), 0)
    assert.deepStrictEqual([...lanes.heldByKey()], [])
  })

  it("keeps serving in turn over many rounds (the ring compacts itself)", () => {
    const lanes = Lanes.make<number>(1)
    const served: Array<number> = []
    for (let round = 0; round < 3000; round++) {
      lanes.push("a", round)
      lanes.push("b", -round)
      const first = lanes.take()!
      const second = lanes.take()!
      served.push(first, second)
      lanes.release("a")
      lanes.release("b")
    }
    assert.strictEqual(served.length, 6000)
    assert.deepStrictEqual(served.slice(-2).sort(), [-2999, 2999].sort())
    assert.strictEqual(lanes.held(), 0)
  })

  it("drain takes every waiting item off, whatever its key's slots, and leaves the taken ones counted", () => {
    const lanes = Lanes.make<string>(1)
    for (const item of ["a1", "a2", "a3"]) lanes.push("a", item)
    lanes.push("b", "b1")
    assert.deepStrictEqual(takeAll(lanes), ["a1", "b1"])
    assert.deepStrictEqual(lanes.drain(), ["a2", "a3"])
    assert.strictEqual(lanes.held(), 2)
    assert.deepStrictEqual(takeAll(lanes), [])
    lanes.release("a")
    lanes.release("b")
    assert.strictEqual(lanes.held(), 0)
    assert.deepStrictEqual([...lanes.heldByKey()], [])
  })
})
