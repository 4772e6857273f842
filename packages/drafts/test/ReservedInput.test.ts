/**
 * What HTTP refuses in any body (contract §1), refused by the domain too, for callers that skip
 * HTTP: reserved keys and non-finite numbers anywhere in a create request or an action.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Transactor from "@waybill/core/Transactor"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventOutbox from "@waybill/events/EventOutbox"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { validateCreate } from "../src/CreateDraft.js"
import { type ActionRequest, apiKeyActor } from "../src/Draft.js"
import * as DraftRepository from "../src/DraftRepository.js"
import { DraftService, layer } from "../src/DraftService.js"
import * as ProductEvaluator from "../src/ProductEvaluator.js"
import * as ReferenceData from "../src/ReferenceData.js"
import { lookup } from "../src/ReferenceData.js"
import { manualBody, masterBody, NOW, referenceData, shapes } from "./fixtures.js"

const RESERVED = "is a reserved key: __proto__, constructor and prototype are refused anywhere in a body"
const NOT_FINITE = "is a number beyond the range of a double (±1.8e308), which would be changed to null"

const issuesOf = (body: unknown) =>
  Either.match(
    validateCreate(body, {
      id: "drf_0000000001bbbbbbbbbbbbbbbb",
      now: NOW,
      transportShape: lookup(shapes),
      template: Option.none()
    }),
    { onLeft: (issues) => issues, onRight: () => [] }
  )

describe("reserved input in drafts", () => {
  it("validateCreate refuses __proto__, constructor and prototype keys at their path, the free-form transport included", () => {
    // As JSON.parse makes them: own data properties, never a prototype.
    const body = JSON.parse(
      JSON.stringify(masterBody())
        .replace('"street"', '"__proto__":{"polluted":true},"street"')
        .replace('"transport":{', '"transport":{"constructor":{"prototype":1},')
    )
    const issues = issuesOf(body)
    assert.deepInclude(issues, { path: "transport.multiStopData.stops.0.address.__proto__", message: RESERVED })
    assert.deepInclude(issues, { path: "transport.constructor", message: RESERVED })
    assert.deepInclude(issues, { path: "transport.constructor.prototype", message: RESERVED })
    assert.strictEqual(({} as Record<string, unknown>).polluted, undefined)
  })

  it("validateCreate refuses a number JSON.parse made Infinity instead of storing null", () => {
    const body = JSON.parse(
      JSON.stringify({ ...manualBody(), transport: { loads: [{ weightKg: 1 }] } }).replace("1}", "1e400}")
    )
    assert.deepStrictEqual(issuesOf(body), [{ path: "transport.loads.0.weightKg", message: NOT_FINITE }])
  })

  const workspace = Schema.decodeSync(WorkspaceId)("wsp_a")
  const service = layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        DraftRepository.layerMemory,
        ReferenceData.layerMemory(referenceData),
        ProductEvaluator.layerReference,
        EventOutbox.layerMemory,
        Transactor.layerMemory
      )
    )
  )

  it.effect("an action with a reserved key or in a reserved actor is refused before anything is stored", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const drafts = yield* DraftService
      const draft = yield* drafts.create(masterBody())
      const withReserved = JSON.parse('{"type":"activate-recurring","constructor":"x"}') as ActionRequest
      const refused = yield* Effect.flip(drafts.act(draft.id, withReserved, apiKeyActor("key_a")))
      assert.deepStrictEqual(refused._tag, "ValidationError")
      if (refused._tag === "ValidationError")
        assert.deepStrictEqual(refused.issues, [{ path: "constructor", message: RESERVED }])
      const actor = JSON.parse('{"type":"operator-user","id":"u1","__proto__":{}}')
      const byActor = yield* Effect.flip(drafts.act(draft.id, { type: "activate-recurring" }, actor))
      if (byActor._tag === "ValidationError")
        assert.deepStrictEqual(byActor.issues, [{ path: "actor.__proto__", message: RESERVED }])
      else assert.fail(`expected a ValidationError, got ${byActor._tag}`)
      assert.strictEqual((yield* drafts.get(draft.id)).status, "draft")
    }).pipe(Effect.provide(service), Effect.provideService(CurrentWorkspace, { id: workspace, apiKeyId: "key_a" }))
  )
})
