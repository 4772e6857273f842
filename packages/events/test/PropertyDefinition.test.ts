import { assert, describe, it } from "@effect/vitest"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as PropertyDefinition from "../src/PropertyDefinition.js"

const region = {
  entity: "tour",
  id: "prop_region",
  type: "select",
  name: "Region",
  options: [{ id: "opt_north", label: "North" }]
}

const paths = (input: unknown) => {
  const result = PropertyDefinition.decodeAll(input)
  return Either.isLeft(result) ? result.left.map((issue) => issue.path) : []
}

describe("PropertyDefinition", () => {
  it("decodes the reference-data file's definitions", () => {
    const result = PropertyDefinition.decodeAll([region, { entity: "order", id: "prop_po", type: "text", name: "PO" }])
    assert.isTrue(Either.isRight(result))
  })

  it("reports every problem with its path", () => {
    assert.deepStrictEqual(
      paths([
        { entity: "tour", id: "prop_a", type: "select", name: "A" },
        { entity: "planet", id: "a.b", type: "colour", name: 1 },
        { entity: "tour", id: "p", type: "text", name: "P", options: [] },
        { ...region, id: "r2", options: [region.options[0], region.options[0]] },
        { entity: "tour", id: "__proto__", type: "text", name: "P" }
      ]).sort(),
      ["0.options", "1.entity", "1.id", "1.name", "1.type", "2.options", "3.options.1.id", "4.id"]
    )
  })

  it("refuses a property defined twice for one entity", () => {
    assert.deepStrictEqual(paths([region, { entity: "tour", id: "prop_region", type: "text", name: "Again" }]), [
      "1.id"
    ])
    assert.deepStrictEqual(paths([region, { ...region, entity: "order" }]), [])
  })

  it.effect("layerFixed answers the same definitions for every workspace", () =>
    Effect.gen(function* () {
      const port = yield* PropertyDefinition.PropertyDefinitions
      const definitions = Either.getOrThrow(PropertyDefinition.decodeAll([region]))
      assert.deepStrictEqual(yield* port.forWorkspace("wsp_a" as WorkspaceId), definitions)
      assert.deepStrictEqual(yield* port.forWorkspace("wsp_b" as WorkspaceId), definitions)
    }).pipe(Effect.provide(PropertyDefinition.layerFixed(Either.getOrThrow(PropertyDefinition.decodeAll([region])))))
  )
})
