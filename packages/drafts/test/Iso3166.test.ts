import { assert, describe, it } from "@effect/vitest"
import * as Iso3166 from "../src/Iso3166.js"

describe("Iso3166", () => {
  it("holds the 249 officially assigned codes, each unique and well-formed", () => {
    assert.strictEqual(Iso3166.countries.length, 249)
    assert.strictEqual(new Set(Iso3166.countries.map((c) => c.alpha3)).size, 249)
    assert.strictEqual(new Set(Iso3166.countries.map((c) => c.alpha2)).size, 249)
    for (const country of Iso3166.countries) {
      assert.match(country.alpha3, /^[A-Z]{3}$/)
      assert.match(country.alpha2, /^[A-Z]{2}$/)
      assert.isAbove(country.name.length, 0)
    }
  })

  it("is ordered by alpha-3 code", () => {
    const codes = Iso3166.countries.map((c) => c.alpha3)
    assert.deepStrictEqual(codes, [...codes].sort())
  })

  it("knows well-known pairs and refuses reserved or user-assigned codes", () => {
    for (const [alpha3, alpha2] of [
      ["DEU", "DE"],
      ["AUT", "AT"],
      ["CHE", "CH"],
      ["GBR", "GB"],
      ["USA", "US"],
      ["SSD", "SS"],
      ["ALA", "AX"],
      ["SXM", "SX"]
    ] as const) {
      assert.strictEqual(Iso3166.fromAlpha3(alpha3)?.alpha2, alpha2)
      assert.strictEqual(Iso3166.fromAlpha2(alpha2)?.alpha3, alpha3)
    }
    for (const code of ["XXX", "XKX", "ANT", "SCG", "EUR", "UNK", "deu", "DE", 276]) {
      assert.isFalse(Iso3166.isAlpha3(code), String(code))
    }
  })
})
