import { assert, describe, it } from "@effect/vitest"
import * as ConsoleTokens from "@waybill/core/ConsoleTokens"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

describe("ConsoleTokens.validateMint", () => {
  it("applies the defaults: one hour, manage, no label", () => {
    assert.deepStrictEqual(
      ConsoleTokens.validateMint({}),
      Either.right({ ttlSeconds: 3600, scope: "manage", label: null })
    )
    assert.deepStrictEqual(
      ConsoleTokens.validateMint(undefined),
      Either.right({ ttlSeconds: 3600, scope: "manage", label: null })
    )
    assert.deepStrictEqual(
      ConsoleTokens.validateMint({ ttlSeconds: 60, scope: "read", label: "Ada" }),
      Either.right({ ttlSeconds: 60, scope: "read", label: "Ada" })
    )
    assert.deepStrictEqual(
      ConsoleTokens.validateMint({ ttlSeconds: 604800 }),
      Either.right({ ttlSeconds: 604800, scope: "manage", label: null })
    )
  })

  it("names every field that is wrong", () => {
    const refused = ConsoleTokens.validateMint({ ttlSeconds: 59, scope: "admin", label: "x".repeat(101), extra: 1 })
    assert.isTrue(Either.isLeft(refused))
    if (Either.isLeft(refused)) {
      assert.deepStrictEqual(
        refused.left.issues.map((issue) => issue.path),
        ["ttlSeconds", "scope", "label", "extra"]
      )
      assert.include(refused.left.issues[0]!.message, "60 to 604800")
    }
    for (const ttlSeconds of [604801, 1.5, "3600", null]) {
      const left = ConsoleTokens.validateMint({ ttlSeconds })
      assert.isTrue(Either.isLeft(left), String(ttlSeconds))
    }
    assert.isTrue(Either.isLeft(ConsoleTokens.validateMint([])))
    assert.isTrue(Either.isLeft(ConsoleTokens.validateMint("read")))
  })

  it("recognises a token's form and its id", () => {
    const token = `wbc_${"0".repeat(26)}_${"A".repeat(43)}`
    assert.isTrue(ConsoleTokens.looksLikeToken(token))
    assert.deepStrictEqual(ConsoleTokens.tokenId(token), Option.some(`cst_${"0".repeat(26)}`))
    assert.strictEqual(ConsoleTokens.tokenId(`wbk_${"0".repeat(26)}_${"A".repeat(43)}`)._tag, "None")
    assert.isFalse(ConsoleTokens.looksLikeToken("wbk_key"))
  })
})
