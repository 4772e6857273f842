/**
 * The first tours of `activate-recurring` / `resume-recurring`, over in-memory ports: they are
 * generated in the action's transaction, so the tours exist when the action answers.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Transactor from "@waybill/core/Transactor"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as Activation from "@waybill/drafts/Activation"
import * as CreateDraft from "@waybill/drafts/CreateDraft"
import { apiKeyActor } from "@waybill/drafts/Draft"
import * as DraftRepository from "@waybill/drafts/DraftRepository"
import * as DraftService from "@waybill/drafts/DraftService"
import { toClaimedMaster } from "@waybill/drafts/RecurringDraft"
import type * as ReferenceData from "@waybill/drafts/ReferenceData"
import * as EventOutbox from "@waybill/events/EventOutbox"
import * as RecurringMasterRepository from "@waybill/recurring/RecurringMasterRepository"
import * as TourGenerator from "@waybill/recurring/TourGenerator"
import * as TourRepository from "@waybill/recurring/TourRepository"
import * as VehicleClass from "@waybill/recurring/VehicleClass"
import { Cause, Chunk, Effect, Exit, Fiber, Layer, Option, Schema, TestClock } from "effect"

const workspace = Schema.decodeSync(WorkspaceId)("ws-a")
const referenceData: ReferenceData.ReferenceDataSet = {
  transportShapes: [
    { id: "shape_line", name: "Line", outputs: ["tour"], recurring: { enabled: true }, requiredFields: [] }
  ],
  vehicleClasses: [{ id: "vc_12t", name: "12 t", maxWeightKg: 5000, rank: 1 }],
  products: []
}

const master = Schema.decodeUnknownSync(CreateDraft.CreateDraft)({
  origin: "manual",
  status: "draft",
  name: "Daily {{ date }}",
  transportShapeId: "shape_line",
  transport: {
    multiStopData: {
      stops: [
        { address: { city: "Hamburg" }, timeWindow: { from: "06:00", to: "08:00" } },
        { address: { city: "Berlin" }, timeWindow: { from: "12:00", to: "14:00" } }
      ]
    },
    tour: { vehicleClass: "vc_12t" }
  },
  recurringSchedule: { cronExpressions: ["0 6 * * *"], timezone: "UTC", leadTimeDays: 3 }
})

const as = Effect.provideService(CurrentWorkspace, { id: workspace, apiKeyId: "env-1" })

// The drafts side of the in-memory ports: the generator sees the repository's drafts as masters.
const masters = Layer.effect(
  RecurringMasterRepository.RecurringMasterRepository,
  Effect.gen(function* () {
    const repository = yield* DraftRepository.DraftRepository
    const drafts = yield* DraftService.DraftService
    const cursors = new Map<string, number>()
    const claim = (ref: RecurringMasterRepository.MasterRef) =>
      Effect.map(repository.get(ref.workspaceId, ref.id), (draft) =>
        Option.flatMap(draft, (d) => toClaimedMaster(ref.workspaceId, d, cursors.get(ref.id) ?? null))
      )
    return RecurringMasterRepository.RecurringMasterRepository.of({
      list: () => Effect.succeed([]),
      claim,
      advance: (ref, cursor) => Effect.sync(() => void cursors.set(ref.id, Math.max(cursors.get(ref.id) ?? 0, cursor))),
      end: (ref) => Effect.asVoid(Effect.orDie(drafts.endBySystem(ref.workspaceId, ref.id, { joinTransaction: true })))
    })
  })
)

const app = (generator: Layer.Layer<TourGenerator.TourGenerator, never, TourGenerator.Requirements>) =>
  Activation.layer.pipe(
    Layer.provideMerge(generator),
    Layer.provideMerge(Layer.mergeAll(masters, VehicleClass.layerFromList(referenceData.vehicleClasses))),
    // The wrapped service outlives the inner one in the merged context (later wins).
    Layer.provideMerge(DraftService.layerMemory(referenceData)),
    Layer.provideMerge(Layer.mergeAll(Transactor.layerMemory, EventOutbox.layerMemory, TourRepository.layerMemory))
  )

const fake = (runMaster: TourGenerator.TourGenerator["Type"]["runMaster"]) =>
  Layer.succeed(TourGenerator.TourGenerator, { run: Effect.die("not used"), runMaster })

const createAndActivate = Effect.gen(function* () {
  yield* TestClock.setTime(Date.parse("2027-01-04T00:00:00Z"))
  const service = yield* DraftService.DraftService
  const draft = yield* service.create(master).pipe(as)
  return yield* service.act(draft.id, { type: "activate-recurring" }, apiKeyActor("env-1")).pipe(as)
})

describe("Activation", () => {
  it.effect("the tours exist when activate-recurring and resume-recurring answer; pause runs nothing", () =>
    Effect.gen(function* () {
      const result = yield* createAndActivate
      const stored = yield* (yield* TourRepository.MemoryTours).all
      assert.deepStrictEqual(
        stored.map((entry) => entry.tour.triggerDate),
        ["2027-01-04", "2027-01-05", "2027-01-06"]
      )
      assert.isTrue(stored.every((entry) => entry.workspaceId === workspace))
      const service = yield* DraftService.DraftService
      const id = result.transportDraft.id
      yield* service.act(id, { type: "pause-recurring" }, apiKeyActor("env-1")).pipe(as)
      yield* TestClock.setTime(Date.parse("2027-01-10T00:00:00Z"))
      assert.strictEqual((yield* (yield* TourRepository.MemoryTours).all).length, 3)
      yield* service.act(id, { type: "resume-recurring" }, apiKeyActor("env-1")).pipe(as)
      assert.deepStrictEqual(
        (yield* (yield* TourRepository.MemoryTours).all).map((entry) => entry.tour.triggerDate),
        ["2027-01-04", "2027-01-05", "2027-01-06", "2027-01-10", "2027-01-11", "2027-01-12"]
      )
    }).pipe(Effect.provide(app(TourGenerator.layer())))
  )

  it.effect("a run that dies fails the action: no 200 without its tours", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(createAndActivate)
      assert.isTrue(Exit.isFailure(exit) && Cause.isDie(exit.cause))
    }).pipe(Effect.provide(app(fake(() => Effect.die(new Error("generator exploded"))))))
  )

  it.effect("the run is part of the action's transaction: the answer waits for it, other work waits too", () => {
    const seen: Array<string> = []
    const slow = fake((ref) =>
      Effect.sync(() => seen.push("run started")).pipe(
        Effect.zipRight(Effect.sleep("1 hour")),
        Effect.zipRight(Effect.sync(() => seen.push("run finished"))),
        Effect.as({ ref, status: "idle" as const, created: [] })
      )
    )
    return Effect.gen(function* () {
      const answer = yield* Effect.fork(createAndActivate)
      while (Chunk.size(yield* TestClock.sleeps()) < 1) yield* Effect.yieldNow()
      const transactor = yield* Transactor.Transactor
      const other = yield* Effect.fork(transactor.withTransaction(Effect.sync(() => seen.push("other transaction"))))
      yield* Effect.yieldNow()
      assert.deepStrictEqual(seen, ["run started"])
      yield* TestClock.adjust("1 hour")
      const result = yield* Fiber.join(answer)
      yield* Fiber.join(other)
      assert.strictEqual(result.transportDraft.status, "active-recurring")
      assert.deepStrictEqual(seen, ["run started", "run finished", "other transaction"])
    }).pipe(Effect.provide(app(slow)))
  })
})
