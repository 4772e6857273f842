import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import * as Docs from "../src/Docs.js"
import * as EventType from "../src/EventType.js"

const file = new URL("../../../docs/events.md", import.meta.url)

describe("docs/events.md", () => {
  it("is what the catalogue renders (run packages/events/scripts/generate-docs.ts when this fails)", () => {
    assert.strictEqual(readFileSync(file, "utf8"), Docs.render())
  })

  it("documents every event type, filter fields and the decisions", () => {
    const text = Docs.render()
    for (const type of EventType.all) assert.include(text, `### ${type}\n`)
    assert.include(text, "## Decisions")
    assert.include(text, "`tour.properties.<propertyId>`")
    assert.include(text, "Guarded roots: `tour`")
    assert.include(text, "The fields of the optional `tour` offer no `is_set` / `is_not_set`.")
  })
})
