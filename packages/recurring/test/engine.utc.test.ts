import { afterAll, assert, describe, it } from "@effect/vitest"
import { processZone } from "./fixtures.js"
import { expansionSuite } from "./suites/expansion.js"
import { generatorSuite } from "./suites/generator.js"

// The engine must not depend on the process time zone: the same suites run under TZ=UTC and
// under a zone far from UTC with its own DST (Pacific/Chatham, +12:45/+13:45).
const zone = processZone("UTC")
zone.set()
afterAll(zone.restore)

describe("process time zone UTC", () => {
  it("is in effect", () => {
    assert.strictEqual(new Date(Date.UTC(2027, 0, 1)).getTimezoneOffset(), 0)
  })
  expansionSuite()
  generatorSuite()
})
