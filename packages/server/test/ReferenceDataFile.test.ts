import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as ReferenceDataFile from "../src/ReferenceDataFile.js"

describe("ReferenceDataFile.parse", () => {
  it("refuses a file nested deeper than 64 levels at the path where the limit is crossed", () => {
    const levels = 100_000
    const json = JSON.parse(`{"products":${"[".repeat(levels)}${"]".repeat(levels)}}`)
    const result = ReferenceDataFile.parse("deep.json", json)
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) {
      assert.deepStrictEqual(result.left.problems, [
        `${["products", ...Array<string>(63).fill("0")].join(".")}: nests deeper than 64 levels of objects and arrays`
      ])
    }
  })
})
