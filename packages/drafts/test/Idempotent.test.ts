/**
 * `DraftService.createIdempotent` over the in-memory ports (contract §8): without an adapter that
 * writes records itself, the draft, its events and the kept answer go through one `Transactor`
 * transaction; replays create nothing, even when the draft's template is gone meanwhile.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Idempotency from "@waybill/core/Idempotency"
import * as Transactor from "@waybill/core/Transactor"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventOutbox from "@waybill/events/EventOutbox"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { toJson } from "../src/Draft.js"
import * as DraftRepository from "../src/DraftRepository.js"
import { DraftService, layer } from "../src/DraftService.js"
import * as ProductEvaluator from "../src/ProductEvaluator.js"
import * as ReferenceData from "../src/ReferenceData.js"
import { manualBody, NOW, referenceData } from "./fixtures.js"

const ws = Schema.decodeSync(WorkspaceId)("wsp_idem")

const TestLayer = layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      DraftRepository.layerMemory,
      ReferenceData.layerMemory(referenceData),
      ProductEvaluator.layerReference,
      EventOutbox.layerMemory,
      Transactor.layerMemory,
      Idempotency.layerMemory
    )
  )
)

const createIdempotent = (body: unknown, key: string) =>
  Effect.flatMap(DraftService, (service) => service.createIdempotent(body, key)).pipe(
    Effect.provideService(CurrentWorkspace, { id: ws, apiKeyId: "k" })
  )

describe("DraftService.createIdempotent (in memory)", () => {
  it.effect("creates once, answers 201 with the draft's JSON, and replays it", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const first = yield* createIdempotent(manualBody(), "k-1")
      assert.deepStrictEqual([first.replayed, first.status, first.body], [false, 201, toJson(first.value)])
      const again = yield* createIdempotent({ ...manualBody() }, "k-1")
      assert.deepStrictEqual(again, { ...first, replayed: true })
      const log = yield* EventOutbox.MemoryEventLog
      assert.strictEqual((yield* log.all).length, 1)
      assert.strictEqual(
        (yield* DraftRepository.DraftRepository.pipe(Effect.flatMap((r) => r.list(ws, { limit: 10 })))).data.length,
        1
      )
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("a replay answers the kept draft even when the same body no longer validates", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const template = yield* Effect.flatMap(DraftService, (service) => service.create(manualBody())).pipe(
        Effect.provideService(CurrentWorkspace, { id: ws, apiKeyId: "k" })
      )
      const fromTemplate = { ...manualBody(), templateDraftId: template.id }
      const first = yield* createIdempotent(fromTemplate, "k-template")
      yield* Effect.flatMap(DraftService, (service) => service.delete(template.id)).pipe(
        Effect.provideService(CurrentWorkspace, { id: ws, apiKeyId: "k" })
      )
      const again = yield* createIdempotent(fromTemplate, "k-template")
      assert.deepStrictEqual(again, { ...first, replayed: true })
    }).pipe(Effect.provide(TestLayer))
  )
})
