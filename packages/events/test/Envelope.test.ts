import { assert, describe, it } from "@effect/vitest"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as Envelope from "../src/Envelope.js"
import * as EventOutbox from "../src/EventOutbox.js"
import * as Producer from "../src/Producer.js"
import { sampleOf } from "./fixtures.js"

const body = {
  id: "evt_01",
  type: "tour-created",
  createdAt: 1_798_000_000,
  payload: { tour: sampleOf("Tour") }
}

const paths = (result: Either.Either<unknown, ReadonlyArray<{ path: string }>>) =>
  Either.isLeft(result) ? result.left.map((issue) => issue.path) : []

describe("Envelope", () => {
  it("decodes a delivery body and narrows the payload by type", () => {
    const decoded = Either.getOrThrow(Envelope.decode(body))
    assert.deepStrictEqual(decoded, body as unknown)
    if (decoded.type === "tour-created") assert.strictEqual(decoded.payload.tour.id, "tour_1")
    else assert.fail("type not narrowed")
  })

  it("has exactly the four keys", () => {
    assert.deepStrictEqual(paths(Envelope.decode({ ...body, webhookId: "whk_1" })), ["webhookId"])
    const { createdAt: _createdAt, ...noCreatedAt } = body
    assert.deepStrictEqual(paths(Envelope.decode(noCreatedAt)), ["createdAt"])
  })

  it("reports envelope and payload issues together, payload paths prefixed", () => {
    assert.deepStrictEqual(
      paths(Envelope.decode({ ...body, id: "dlv_1", createdAt: 1.5, payload: { tour: { status: "x" } } })).sort(),
      ["createdAt", "id", "payload.tour.id"]
    )
    assert.deepStrictEqual(paths(Envelope.decode({ ...body, type: "tour-updated" })), ["type"])
    assert.deepStrictEqual(paths(Envelope.decode([])), [""])
  })

  it("decodes raw bodies and refuses invalid JSON", () => {
    assert.isTrue(Either.isRight(Envelope.decodeJson(JSON.stringify(body))))
    assert.deepStrictEqual(Envelope.decodeJson("{not json"), Either.left([{ path: "", message: "is not valid JSON" }]))
  })

  it.effect("decodes the exact body the outbox records", () =>
    Effect.gen(function* () {
      const outbox = yield* EventOutbox.EventOutbox
      const [recorded] = yield* outbox.publish("wsp_1" as WorkspaceId, [Producer.tourDeleted({ id: "tour_9" })])
      const decoded = Either.getOrThrow(Envelope.decodeJson(recorded!.body))
      assert.strictEqual(decoded.id, recorded!.id)
      assert.strictEqual(decoded.type, "tour-deleted")
      assert.deepStrictEqual(decoded.payload, { tourId: "tour_9" })
      assert.deepStrictEqual(Object.keys(JSON.parse(recorded!.body)), ["id", "type", "createdAt", "payload"])
      const log = yield* EventOutbox.MemoryEventLog
      assert.strictEqual((yield* log.all).length, 1)
    }).pipe(Effect.provide(EventOutbox.layerMemory))
  )

  it.effect("a payload given as JSON text gives the body JSON.stringify would write, byte for byte", () =>
    Effect.gen(function* () {
      const payloads = fc.sample(fc.jsonValue({ maxDepth: 4, stringUnit: "binary" }), { numRuns: 300, seed: 23 })
      const events = payloads.flatMap((payload) => [
        { type: "tour-deleted" as const, payload },
        { type: "tour-deleted" as const, payload, payloadJson: JSON.stringify(payload) }
      ])
      const recorded = yield* EventOutbox.recordAll("wsp_1" as WorkspaceId, events)
      for (let index = 0; index < recorded.length; index += 2) {
        const plain = recorded[index]!
        const built = recorded[index + 1]!
        const { id, type, createdAt, payload } = built
        assert.strictEqual(built.body, JSON.stringify({ id, type, createdAt, payload }))
        assert.strictEqual(built.body.replace(built.id, plain.id), plain.body)
      }
    })
  )

  it("envelopeSchema types one event's envelope", () => {
    assert.strictEqual(Envelope.envelopeSchema("tour-created"), Envelope.envelopeSchema("tour-created"))
  })
})
