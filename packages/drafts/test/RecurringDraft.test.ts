import { assert, describe, it } from "@effect/vitest"
import * as Transactor from "@waybill/core/Transactor"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventOutbox from "@waybill/events/EventOutbox"
import { type MasterRef, RecurringMasterRepository } from "@waybill/recurring/RecurringMasterRepository"
import * as TourGenerator from "@waybill/recurring/TourGenerator"
import * as TourRepository from "@waybill/recurring/TourRepository"
import * as VehicleClass from "@waybill/recurring/VehicleClass"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { type ActionType, apiKeyActor } from "../src/Draft.js"
import * as DraftRepository from "../src/DraftRepository.js"
import { DraftService, layer } from "../src/DraftService.js"
import * as ProductEvaluator from "../src/ProductEvaluator.js"
import { activeSince, toClaimedMaster, toRecurringMaster } from "../src/RecurringDraft.js"
import * as ReferenceData from "../src/ReferenceData.js"
import { decodeCreate, draftOf, masterBody, NOW, NOW_SECONDS, referenceData, vehicleClasses } from "./fixtures.js"

const ws = Schema.decodeSync(WorkspaceId)("wsp_a")

describe("toRecurringMaster", () => {
  it("takes schedule, name, vehicle class and stops out of a master", () => {
    const master = toRecurringMaster(ws, draftOf())
    assert.isTrue(Option.isSome(master))
    if (Option.isSome(master)) {
      assert.strictEqual(master.value.id, draftOf().id)
      assert.strictEqual(master.value.workspaceId, ws)
      assert.strictEqual(master.value.name, "Line {{ weekday }}")
      assert.strictEqual(master.value.vehicleClass, "vc_12t")
      assert.deepStrictEqual(master.value.schedule, draftOf().recurringSchedule)
      assert.deepStrictEqual(
        master.value.stops.map((stop) => [stop.timeWindow, stop.dayOffset, stop.loads]),
        [
          [{ from: "06:00", to: "08:00" }, 0, [{ weightKg: 800 }, { weightKg: 400 }]],
          [{ from: "12:00", to: "14:00" }, 1, [{ weightKg: 1200 }]]
        ]
      )
    }
  })

  it("drops malformed weights, which are stored leniently", () => {
    const transport = structuredClone(draftOf().transport!) as {
      multiStopData: { stops: Array<{ loads?: Array<unknown> }> }
    }
    transport.multiStopData.stops[0]!.loads = [{ weightKg: "800" }, { weightKg: -1 }, "x", { weightKg: 5 }]
    delete transport.multiStopData.stops[1]!.loads
    const master = Option.getOrThrow(toRecurringMaster(ws, draftOf({ transport })))
    assert.deepStrictEqual(master.stops[0]!.loads, [{}, {}, {}, { weightKg: 5 }])
    assert.deepStrictEqual(master.stops[1]!.loads, [])
  })

  it("is none for a draft that is not a master or lacks stops or vehicle class", () => {
    assert.isTrue(Option.isNone(toRecurringMaster(ws, draftOf({ recurringSchedule: null }))))
    assert.isTrue(Option.isNone(toRecurringMaster(ws, draftOf({ transport: null }))))
    assert.isTrue(Option.isNone(toRecurringMaster(ws, draftOf({ transport: { ...draftOf().transport!, tour: {} } }))))
  })

  it("claims only active and paused masters, active since their latest activation or resumption", () => {
    const active = draftOf({ status: "active-recurring", updatedAt: NOW_SECONDS + 5 })
    assert.strictEqual(activeSince(active), NOW_SECONDS + 5)
    const claimed = Option.getOrThrow(toClaimedMaster(ws, active, 42))
    assert.strictEqual(claimed.status, "active")
    assert.strictEqual(claimed.cursor, 42)
    assert.strictEqual(claimed.activeSince, NOW_SECONDS + 5)
    assert.strictEqual(
      Option.getOrThrow(toClaimedMaster(ws, { ...active, status: "paused-recurring" }, null)).status,
      "paused"
    )
    for (const status of ["draft", "ended-recurring"] as const) {
      assert.isTrue(Option.isNone(toClaimedMaster(ws, { ...active, status }, null)))
    }
  })
})

// The generator of @waybill/recurring over drafts: a RecurringMasterRepository adapter built only from
// this package's ports, as the PostgreSQL adapter is (there with SQL for list and cursors).
const DraftMasters = Layer.effect(
  RecurringMasterRepository,
  Effect.gen(function* () {
    const repository = yield* DraftRepository.DraftRepository
    const service = yield* DraftService
    const cursors = new Map<string, number>()
    const key = (ref: MasterRef) => `${ref.workspaceId}/${ref.id}`
    return RecurringMasterRepository.of({
      list: (now) =>
        Effect.map(repository.list(ws, { limit: 100 }), (page) =>
          page.data
            .filter(
              (draft) =>
                draft.status === "active-recurring" ||
                (draft.status === "paused-recurring" &&
                  draft.recurringSchedule?.endsAt !== undefined &&
                  draft.recurringSchedule.endsAt <= now)
            )
            .map((draft) => ({ workspaceId: ws, id: draft.id }))
        ),
      claim: (ref) =>
        Effect.map(repository.getForUpdate(ref.workspaceId, ref.id), (found) =>
          Option.flatMap(found, (draft) => toClaimedMaster(ref.workspaceId, draft, cursors.get(key(ref)) ?? null))
        ),
      advance: (ref, cursor) =>
        Effect.sync(() => void cursors.set(key(ref), Math.max(cursors.get(key(ref)) ?? 0, cursor))),
      end: (ref) =>
        service.endBySystem(ref.workspaceId, ref.id, { joinTransaction: true }).pipe(Effect.orDie, Effect.asVoid)
    })
  })
)

const Ports = Layer.mergeAll(
  DraftRepository.layerMemory,
  ReferenceData.layerMemory(referenceData),
  ProductEvaluator.layerReference,
  EventOutbox.layerMemory,
  Transactor.layerMemory,
  TourRepository.layerMemory,
  VehicleClass.layerFromList(vehicleClasses)
)
const Drafts = layer.pipe(Layer.provideMerge(Ports))
const Generator = TourGenerator.layer().pipe(Layer.provideMerge(DraftMasters), Layer.provideMerge(Drafts))

describe("the recurring generator over drafts", () => {
  it.effect("generates tours for an active master and ends it through endBySystem once endsAt has passed", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const service = yield* DraftService
      const generator = yield* TourGenerator.TourGenerator
      const asCaller = <A, E, R>(self: Effect.Effect<A, E, R>) =>
        Effect.provideService(self, CurrentWorkspace, { id: ws, apiKeyId: "key_a" })
      const act = (id: string, type: ActionType) => asCaller(service.act(id, { type }, apiKeyActor("key_a")))

      const body = masterBody()
      ;(body.recurringSchedule as Record<string, unknown>).startsAt = NOW_SECONDS + 3600
      ;(body.recurringSchedule as Record<string, unknown>).endsAt = NOW_SECONDS + 21 * 86_400
      const draft = yield* asCaller(service.create(decodeCreate(body)))
      yield* act(draft.id, "activate-recurring")
      const first = yield* generator.run
      assert.isAbove(first.toursCreated, 0)

      yield* TestClock.setTime((NOW_SECONDS + 22 * 86_400) * 1000)
      const last = yield* generator.run
      assert.strictEqual(last.ended, 1)
      assert.strictEqual(last.failed, 0)
      const ended = yield* asCaller(service.get(draft.id))
      assert.strictEqual(ended.status, "ended-recurring")
      const log = yield* EventOutbox.MemoryEventLog
      const types = (yield* log.all).map((event) => event.type)
      assert.deepStrictEqual(types.slice(-2), ["transport-draft-recurring-ended", "transport-draft-action-created"])
      const action = (yield* log.all).at(-1)!.payload as { action: { actor: unknown } }
      assert.deepStrictEqual(action.action.actor, { type: "system", id: "system" })
      assert.strictEqual((yield* generator.run).ended, 0)
    }).pipe(Effect.provide(Generator))
  )
})
