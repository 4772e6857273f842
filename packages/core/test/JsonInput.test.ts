import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import * as fc from "fast-check"
import * as Issue from "../src/Issue.js"
import * as JsonDepth from "../src/JsonDepth.js"
import * as JsonInput from "../src/JsonInput.js"
import * as JsonText from "../src/JsonText.js"

const FORBIDDEN = "is a reserved key: __proto__, constructor and prototype are refused anywhere in a body"
const NOT_FINITE = "is a number beyond the range of a double (±1.8e308), which would be changed to null"

describe("JsonInput", () => {
  it("refuses __proto__, constructor and prototype at their own path, however deep, free-form objects included", () => {
    const value = JSON.parse(
      '{"transport":{"stops":[{"address":{"__proto__":{"x":1},"city":"B"}}]},"constructor":1,"a":{"b":{"prototype":null}}}'
    )
    assert.deepStrictEqual(JsonInput.issues(value), [
      Issue.make("transport.stops.0.address.__proto__", FORBIDDEN),
      Issue.make("constructor", FORBIDDEN),
      Issue.make("a.b.prototype", FORBIDDEN)
    ])
    // As values, or as keys of arrays' objects only where they are keys.
    assert.deepStrictEqual(JsonInput.issues({ name: "__proto__", list: ["constructor", "prototype"] }), [])
    // Other spellings are ordinary keys.
    assert.deepStrictEqual(JsonInput.issues({ __proto: 1, Constructor: 2, "prototype ": 3 }), [])
  })

  it("refuses numbers JSON.parse turned into Infinity, at their path, and keeps every finite one", () => {
    const value = JSON.parse(`{"weightKg":1e400,"loads":[1,-1e999,${"9".repeat(400)}],"small":1e-400,"max":1.7e308}`)
    assert.deepStrictEqual(JsonInput.issues(value, { path: "body" }), [
      Issue.make("body.weightKg", NOT_FINITE),
      Issue.make("body.loads.1", NOT_FINITE),
      Issue.make("body.loads.2", NOT_FINITE)
    ])
    assert.deepStrictEqual(JsonInput.issues(Number.NaN, { path: "n" }), [Issue.make("n", NOT_FINITE)])
    assert.deepStrictEqual(JsonInput.issues(42), [])
  })

  it("reports storable text as JsonText does, and skips it when told the text holds nothing to find", () => {
    const value = JSON.parse('{"b":[1,{"c":"\\ud800"}],"a":"x\\u0000","d":{"k\\u0000":true}}')
    assert.deepStrictEqual(JsonInput.issues(value, { path: "body" }), JsonText.textIssues(value, "body"))
    assert.deepStrictEqual(JsonInput.issues(value, { text: false }), [])
  })

  it("reports nesting beyond the limit alone, where JsonDepth finds it, past any number of other issues", () => {
    let deep: unknown = {}
    for (let level = 0; level < 100_000; level++) deep = { x: deep }
    const many = {
      ...Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, Number.POSITIVE_INFINITY])),
      deep
    }
    const found = JsonInput.inspect(many)
    assert.deepStrictEqual(found.issues, [])
    assert.deepStrictEqual(found.tooDeep, Option.getOrUndefined(JsonDepth.depthIssue(many)))
    assert.deepStrictEqual(JsonInput.issues([[[1]]], { maxDepth: 2, path: "p" }), [
      Issue.make("p.0.0", "nests deeper than 2 levels of objects and arrays")
    ])
  })

  it("spells a key that cannot be stored quoted in every path, as JsonDepth does", () => {
    const value = JSON.parse('{"k\\u0000":{"x":{}}}')
    const expected = Issue.make('"k\\u0000".x', "nests deeper than 2 levels of objects and arrays")
    assert.deepStrictEqual(JsonInput.inspect(value, { maxDepth: 2 }).tooDeep, expected)
    assert.deepStrictEqual(JsonInput.inspect(value, { maxDepth: 2, text: false }).tooDeep, expected)
    assert.deepStrictEqual(Option.getOrUndefined(JsonDepth.depthIssue(value, 2)), expected)
  })

  it("reports at most JsonText.maxIssues", () => {
    assert.strictEqual(JsonInput.issues(Array(1000).fill(Number.POSITIVE_INFINITY)).length, JsonText.maxIssues)
  })

  it("agrees with JsonDepth on depth and with JsonText on text for any JSON value", () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.oneof(fc.string({ unit: "binary" }), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null)),
        fc.array(tie("node"), { maxLength: 4 }),
        fc.dictionary(fc.string({ unit: "binary", maxLength: 4 }), tie("node"), { maxKeys: 4 })
      )
    })).node
    fc.assert(
      fc.property(value, fc.integer({ min: 1, max: 6 }), (json, limit) => {
        const limited = JsonInput.inspect(json, { maxDepth: limit })
        assert.deepStrictEqual(limited.tooDeep, Option.getOrUndefined(JsonDepth.depthIssue(json, limit)))
        const found = JsonInput.inspect(json)
        assert.isUndefined(found.tooDeep)
        assert.deepStrictEqual(
          found.issues.filter((issue) => issue.message !== FORBIDDEN && issue.message !== NOT_FINITE),
          JsonText.textIssues(json)
        )
      }),
      { numRuns: 2_000 }
    )
  })
  it("with jsonValues, names what JSON cannot hold at its path; an undefined property is an absent one", () => {
    class Order {}
    const value = {
      at: new Date(0),
      order: new Order(),
      call: () => 1,
      big: 1n,
      gone: undefined,
      list: [1, undefined, Symbol("s")],
      plain: Object.create(null) as object,
      ok: { nested: [true, null, "text", 2.5] }
    }
    assert.deepStrictEqual(JsonInput.issues(value, { jsonValues: true }), [
      { path: "at", message: "is not a JSON value (Date object)" },
      { path: "order", message: "is not a JSON value (Order object)" },
      { path: "call", message: "is not a JSON value (function)" },
      { path: "big", message: "is not a JSON value (bigint)" },
      { path: "list.1", message: "is not a JSON value (undefined)" },
      { path: "list.2", message: "is not a JSON value (symbol)" }
    ])
    assert.deepStrictEqual(JsonInput.issues(undefined, { jsonValues: true, path: "body" }), [
      { path: "body", message: "is not a JSON value (undefined)" }
    ])
    // Without the option nothing changes: parsed JSON holds none of these.
    assert.deepStrictEqual(JsonInput.issues(value), [])
  })
})
