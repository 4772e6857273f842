import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema, TestClock } from "effect"
import * as Id from "../src/Id.js"
import * as Issue from "../src/Issue.js"
import * as ValidationError from "../src/ValidationError.js"

describe("Id", () => {
  it("formats a prefix, a sortable time part and 80 random bits", () => {
    const id = Id.format("drf", 1_798_000_000_000, new Uint8Array(10).fill(255))
    assert.strictEqual(id.length, 30)
    assert.isTrue(id.startsWith("drf_"))
    assert.isTrue(id.endsWith("zzzzzzzzzzzzzzzz"))
    assert.isTrue(Id.isId("drf", id))
    assert.isFalse(Id.isId("evt", id))
  })

  it("sorts by creation time", () => {
    const a = Id.format("evt", 1_000, new Uint8Array(10).fill(255))
    const b = Id.format("evt", 1_001, new Uint8Array(10))
    assert.isTrue(a < b)
  })

  it.effect("uses the Clock", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_798_000_000_000)
      const a = yield* Id.make("dlv")
      const b = yield* Id.make("dlv")
      assert.strictEqual(a.slice(0, 14), Id.format("dlv", 1_798_000_000_000, new Uint8Array(10)).slice(0, 14))
      assert.notStrictEqual(a, b)
    })
  )
})

describe("Issue", () => {
  it("lists every problem of a parse error with dotted paths", () => {
    const schema = Schema.Struct({ a: Schema.String, b: Schema.Array(Schema.Struct({ c: Schema.Number })) })
    const result = Schema.decodeUnknownEither(schema)({ a: 1, b: [{ c: 1 }, { c: "x" }] }, { errors: "all" })
    assert.isTrue(result._tag === "Left")
    if (result._tag === "Left") {
      const issues = Issue.fromParseError(result.left, "body")
      assert.deepStrictEqual(
        issues.map((i) => i.path),
        ["body.a", "body.b.1.c"]
      )
    }
  })

  it("prefixes nested issues", () => {
    assert.deepStrictEqual(Issue.prefix([Issue.make("x", "m"), Issue.make("", "n")], "filters"), [
      { path: "filters.x", message: "m" },
      { path: "filters", message: "n" }
    ])
  })

  it("summarises issues in the error message", () => {
    const one = ValidationError.fromIssues([Issue.make("url", "must use https")])
    assert.strictEqual(one.message, "The request is invalid: url: must use https")
    const two = ValidationError.fromIssues([Issue.make("a", "x"), Issue.make("b", "y")], "filter")
    assert.strictEqual(two.message, "The filter is invalid: 2 problems found")
  })
})
