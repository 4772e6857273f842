import { assert, describe, it } from "@effect/vitest"
import { ValidationError } from "@waybill/core/ValidationError"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Entity from "../src/Entity.js"
import type * as EntityAction from "../src/EntityAction.js"
import * as Envelope from "../src/Envelope.js"
import * as EventOutbox from "../src/EventOutbox.js"
import * as Payload from "../src/Payload.js"
import * as Producer from "../src/Producer.js"
import * as PropertyDefinition from "../src/PropertyDefinition.js"
import { sampleOf } from "./fixtures.js"

// Built from text: far deeper than any recursive reader survives.
const arrays = (levels: number): unknown => JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`)
const under = (path: string, zeros: number) => [path, ...Array<string>(zeros).fill("0")].join(".")

const limit = EventOutbox.maxPayloadDepth
const message = (levels: number) => `nests deeper than ${levels} levels of objects and arrays`

// A tour-created payload whose custom property `deep` holds `levels` nested arrays: the payload
// nests 3 + levels levels (payload, tour, properties, then the arrays).
const tourPayload = (levels: number) => {
  const tour = sampleOf("Tour") as Entity.Tour
  return { tour: { ...tour, properties: { ...tour.properties, deep: arrays(levels) } } }
}

describe("nesting bounds of the catalogue", () => {
  it("decodePayload takes a payload of maxPayloadDepth levels and refuses one more at its path", () => {
    assert.isTrue(Either.isRight(Payload.decodePayload("tour-created", tourPayload(limit - 3))))
    for (const levels of [limit - 2, 5_000, 100_000]) {
      assert.deepStrictEqual(
        Payload.decodePayload("tour-created", tourPayload(levels)),
        Either.left([{ path: under("tour.properties.deep", limit - 3), message: message(limit) }])
      )
    }
    // Where a scalar is expected, the decoder's message would quote the whole refused value.
    const tour = sampleOf("Tour") as Entity.Tour
    const refused = Payload.decodePayload("tour-created", { tour: { ...tour, id: arrays(100_000) } })
    assert.deepStrictEqual(Either.isLeft(refused) && refused.left.map((issue) => issue.path), [
      under("tour.id", limit - 2)
    ])
  })

  it("Envelope.decode refuses a body deeper than any the outbox records, at its path", () => {
    const body = (payload: unknown) => ({ id: "evt_1", type: "tour-created", createdAt: 1_798_000_000, payload })
    assert.isTrue(Either.isRight(Envelope.decode(body(tourPayload(limit - 3)))))
    assert.deepStrictEqual(
      Envelope.decode({ ...body(tourPayload(100_000)), id: arrays(100_000) }),
      Either.left([{ path: under("id", limit), message: message(limit + 1) }])
    )
    const text = `{"id":"evt_1","type":"tour-created","createdAt":1,"payload":${"[".repeat(100_000)}${"]".repeat(100_000)}}`
    assert.deepStrictEqual(
      Envelope.decodeJson(text),
      Either.left([{ path: under("payload", limit), message: message(limit + 1) }])
    )
  })

  it.effect("the outbox records the deepest payload and the consumer decodes its body", () =>
    Effect.gen(function* () {
      const outbox = yield* EventOutbox.EventOutbox
      const [recorded] = yield* outbox.publish("wsp_1" as WorkspaceId, [
        { type: "tour-created", payload: tourPayload(limit - 3) }
      ])
      assert.isTrue(Either.isRight(Envelope.decodeJson(recorded!.body)))
    }).pipe(Effect.provide(EventOutbox.layerMemory))
  )

  it.effect("the outbox refuses a deeper payload as its producer's defect, naming the path, and records nothing", () =>
    Effect.gen(function* () {
      const outbox = yield* EventOutbox.EventOutbox
      for (const levels of [limit - 2, 100_000]) {
        const exit = yield* Effect.exit(
          outbox.publish("wsp_1" as WorkspaceId, [
            { type: "tour-deleted", payload: { tourId: "tour_1" } },
            { type: "tour-created", payload: tourPayload(levels) }
          ])
        )
        assert.isTrue(Exit.isFailure(exit))
        const defect = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.dieOption(exit.cause)) : undefined
        assert.instanceOf(defect, ValidationError)
        assert.deepStrictEqual((defect as ValidationError).issues, [
          { path: under("payload.tour.properties.deep", limit - 3), message: message(limit) }
        ])
      }
      const log = yield* EventOutbox.MemoryEventLog
      assert.deepStrictEqual(yield* log.all, [])
    }).pipe(Effect.provide(EventOutbox.layerMemory))
  )

  it("redaction refuses an action deeper than any payload instead of exhausting the stack", () => {
    const action = (levels: number): EntityAction.TourAction => ({
      id: "act_1",
      payload: { type: "advance", carrierBooking: { carrierId: "car_1", providerPayload: {} }, deep: arrays(levels) },
      createdAt: 1_798_000_000,
      createdAtMilliseconds: 1_798_000_000_000
    })
    // The action nests 2 + levels levels (action, payload, then the arrays).
    assert.deepStrictEqual(Producer.redactTourAction(action(limit - 2)).payload.carrierBooking, { carrierId: "car_1" })
    for (const levels of [limit - 1, 100_000]) {
      assert.throws(() => Producer.redactTourAction(action(levels)), ValidationError, under("payload.deep", limit - 2))
    }
    // The action of a payload decodePayload takes is always within the limit.
    const tour = sampleOf("Tour") as Entity.Tour
    const payload = { tour, action: action(limit - 3) }
    assert.isTrue(Either.isRight(Payload.decodePayload("tour-action-created", payload)))
    assert.deepStrictEqual(
      Producer.redact("tour-action-created", payload).action.payload.deep,
      action(limit - 3).payload.deep
    )
  })

  it("PropertyDefinition.decodeAll refuses a list nested deeper than 64 levels, at its path", () => {
    assert.deepStrictEqual(
      PropertyDefinition.decodeAll([arrays(100_000)]),
      Either.left([{ path: under("0", 63), message: message(64) }])
    )
  })
})
