/**
 * The domain samples of docs/embedding.md (src/domain/*.ts) compute what the guide says.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { vi } from "vitest"

// The samples print what they compute for a reader running them; here the assertions read it.
const print = vi.hoisted(() => vi.spyOn(console, "log").mockImplementation(() => undefined))
afterAll(() => print.mockRestore())

import * as Drafts from "../src/domain/drafts.js"
import * as Filters from "../src/domain/filters.js"
import * as Recurring from "../src/domain/recurring.js"
import * as Signing from "../src/domain/signing.js"

describe("domain packages alone", () => {
  it("validateCreate builds a master or lists every issue; transition activates it with its events", () => {
    assert.strictEqual(Drafts.draft.status, "draft")
    assert.strictEqual(Drafts.draft.id, "drf_example")
    assert.deepStrictEqual(
      Drafts.issues.map((issue) => issue.path),
      ["transport.multiStopData.stops", "transport.multiStopData.stops.0.timeWindow", "transport.tour.vehicleClass"]
    )
    assert.strictEqual(Drafts.activated.draft.status, "active-recurring")
    assert.strictEqual(Drafts.activated.action.payload.type, "activate-recurring")
    assert.deepStrictEqual(
      Drafts.activated.events.map((event) => event.type),
      ["transport-draft-recurring-activated", "transport-draft-action-created"]
    )
  })

  it("expand yields weekday tours with DST-exact windows and the recalculated class", () => {
    assert.deepStrictEqual(
      Recurring.tours.map((tour) => [tour.name, new Date(tour.stops[0]!.window.startsAt * 1000).toISOString()]),
      [
        ["Line Thursday 2027-03-25", "2027-03-25T05:00:00.000Z"],
        ["Line Friday 2027-03-26", "2027-03-26T05:00:00.000Z"],
        // Summer time from Sunday: 06:00 in Berlin is 04:00 UTC.
        ["Line Monday 2027-03-29", "2027-03-29T04:00:00.000Z"],
        ["Line Tuesday 2027-03-30", "2027-03-30T04:00:00.000Z"],
        ["Line Wednesday 2027-03-31", "2027-03-31T04:00:00.000Z"]
      ]
    )
    for (const tour of Recurring.tours) {
      assert.strictEqual(tour.vehicleClass, "vc_3t5")
      assert.strictEqual(tour.vehicleClassReason, "recalculated")
      // The second stop is a day later.
      assert.strictEqual(tour.stops[1]!.window.startsAt - tour.stops[0]!.window.startsAt, (24 + 7) * 3600)
    }
  })

  it("validateFilter reports every problem; the compiled filter tells matching payloads", () => {
    assert.isTrue(Filters.north)
    assert.isFalse(Filters.south)
    assert.isTrue(Either.isLeft(Filters.refused))
    assert.deepStrictEqual(Either.isLeft(Filters.refused) ? Filters.refused.left.map((issue) => issue.path) : [], [
      "conditions.0.operator",
      "conditions.1.field"
    ])
    assert.isFalse(Filters.matches({ tour: { status: "planned" } }))
  })

  it("sign and verify: fresh passes, a replay and a changed body are refused", () => {
    assert.strictEqual(Signing.headers["X-Signature-Algorithm"], "hmac-sha256")
    assert.match(Signing.headers["X-Signature"], /^[0-9a-f]{64}$/)
    assert.isTrue(Either.isRight(Signing.fresh))
    assert.isTrue(Either.isLeft(Signing.replayed) && Signing.replayed.left._tag === "TimestampTooOld")
    assert.isTrue(Either.isLeft(Signing.tampered) && Signing.tampered.left._tag === "SignatureMismatch")
  })
})
