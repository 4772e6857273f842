/**
 * What HTTP refuses in any body (contract §1), refused by the webhooks package too, for callers
 * that skip HTTP: reserved keys and non-finite numbers in a registration or a published event.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Issue } from "@waybill/core/Issue"
import { decodeEvent } from "@waybill/events/EventIntake"
import * as Either from "effect/Either"
import { validateRegistration } from "../src/Registration.js"
import { definitions, registration, tour } from "./fixtures.js"

const RESERVED = "is a reserved key: __proto__, constructor and prototype are refused anywhere in a body"
const NOT_FINITE = "is a number beyond the range of a double (±1.8e308), which would be changed to null"

const registrationIssues = (input: unknown): ReadonlyArray<Issue> =>
  Either.match(validateRegistration(input, { propertyDefinitions: definitions, allowPrivateTargets: false }), {
    onLeft: (issues) => issues,
    onRight: () => []
  })

const eventIssues = (input: unknown): ReadonlyArray<Issue> =>
  Either.match(decodeEvent(input), { onLeft: (issues) => issues, onRight: () => [] })

describe("reserved input in webhooks", () => {
  it("a registration with a reserved key anywhere is refused at that path", () => {
    const body = JSON.parse(
      JSON.stringify(registration({ description: "ops" })).replace('"auth":{', '"auth":{"__proto__":{"x":1},')
    )
    assert.deepInclude(
      registrationIssues(body).map((issue) => issue.path),
      "auth.__proto__"
    )
    const filtered = JSON.parse(
      JSON.stringify(
        registration({
          filters: { "tour-created": { conditions: [{ field: "tour.status", operator: "equals", value: "x" }] } }
        })
      ).replace('"conditions":[{', '"conditions":[{"prototype":true,')
    )
    assert.deepInclude(
      registrationIssues(filtered).map((issue) => issue.path),
      "filters.tour-created.conditions.0.prototype"
    )
  })

  it("an event with a reserved key or a non-finite number anywhere in its payload is refused at that path", () => {
    const reserved = JSON.parse(
      JSON.stringify({ type: "tour-created", payload: { tour: tour({ prop_region: "opt_north" }) } }).replace(
        '"properties":{',
        '"properties":{"constructor":{"a":1},'
      )
    )
    assert.deepStrictEqual(eventIssues(reserved), [{ path: "payload.tour.properties.constructor", message: RESERVED }])
    const infinite = JSON.parse(
      JSON.stringify({ type: "tour-created", payload: { tour: { ...tour(), weightKg: 1 } } }).replace(
        '"weightKg":1',
        '"weightKg":1e400'
      )
    )
    assert.deepStrictEqual(eventIssues(infinite), [{ path: "payload.tour.weightKg", message: NOT_FINITE }])
    // A key the envelope does not know is reported once, as unknown.
    assert.deepStrictEqual(eventIssues(JSON.parse('{"type":"tour-created","payload":{},"__proto__":1}'))[0], {
      path: "__proto__",
      message: "is not a known field"
    })
  })
})
