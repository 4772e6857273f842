import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import * as Transactor from "@waybill/core/Transactor"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as CreateDraft from "@waybill/drafts/CreateDraft"
import { apiKeyActor } from "@waybill/drafts/Draft"
import { DraftService, layer as DraftServiceLayer } from "@waybill/drafts/DraftService"
import * as ProductEvaluator from "@waybill/drafts/ProductEvaluator"
import * as ReferenceData from "@waybill/drafts/ReferenceData"
import { RecurringMasterRepository } from "@waybill/recurring/RecurringMasterRepository"
import type { Tour } from "@waybill/recurring/Tour"
import * as TourGenerator from "@waybill/recurring/TourGenerator"
import { TourQuery } from "@waybill/recurring/TourQuery"
import { TourRepository } from "@waybill/recurring/TourRepository"
import * as VehicleClass from "@waybill/recurring/VehicleClass"
import { Deferred, Effect, Either, Fiber, Layer, Logger, LogLevel, Option, Schema, TestClock } from "effect"
import * as DraftRepository from "../src/PgDraftRepository.js"
import * as EventOutbox from "../src/PgEventOutbox.js"
import * as PgRecurringMasterRepository from "../src/PgRecurringMasterRepository.js"
import * as TourRepositoryPg from "../src/PgTourRepository.js"
import { forEachBackend } from "./harness.js"

const wsA = Schema.decodeSync(WorkspaceId)("ws-a")
const wsB = Schema.decodeSync(WorkspaceId)("ws-b")

const referenceData: ReferenceData.ReferenceDataSet = {
  transportShapes: [
    { id: "shape_line", name: "Line", outputs: ["tour"], recurring: { enabled: true }, requiredFields: [] }
  ],
  vehicleClasses: [
    { id: "vc_3t5", name: "3.5 t", maxWeightKg: 1000, rank: 1 },
    { id: "vc_12t", name: "12 t", maxWeightKg: 5000, rank: 2 }
  ],
  products: []
}

/** Epoch seconds of an ISO instant. */
const at = (iso: string) => Date.parse(iso) / 1000
const setNow = (iso: string) => TestClock.setTime(Date.parse(iso))

/** A daily master at 06:00 UTC with a 7-day lead time; two stops, the second the next day. */
const dailyMaster = (schedule: Record<string, unknown> = {}) =>
  Schema.decodeUnknownSync(CreateDraft.CreateDraft)({
    origin: "manual",
    status: "draft",
    name: "Daily {{ weekday }} {{ date }}",
    transportShapeId: "shape_line",
    transport: {
      multiStopData: {
        stops: [
          { address: { city: "Hamburg" }, timeWindow: { from: "06:00", to: "08:00" }, loads: [{ weightKg: 800 }] },
          { address: { city: "München" }, timeWindow: { from: "12:00", to: "14:00" }, dayOffset: 1 }
        ]
      },
      tour: { vehicleClass: "vc_12t" }
    },
    recurringSchedule: {
      cronExpressions: ["0 6 * * *"],
      timezone: "UTC",
      leadTimeDays: 7,
      vehicleClassAdjustmentStrategy: "preserve",
      ...schedule
    }
  })

const as = (workspaceId: WorkspaceId) => Effect.provideService(CurrentWorkspace, { id: workspaceId, apiKeyId: "env-1" })

/** Creates and activates a master at the current test time; returns its id. */
const activeMaster = (workspaceId: WorkspaceId, schedule?: Record<string, unknown>) =>
  Effect.gen(function* () {
    const drafts = yield* DraftService
    const draft = yield* drafts.create(dailyMaster(schedule)).pipe(as(workspaceId))
    yield* drafts.act(draft.id, { type: "activate-recurring" }, apiKeyActor("env-1")).pipe(as(workspaceId))
    return draft.id
  })

const storedTours = (draftId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ id: string; trigger_at: number; workspace_id: string }>`
        SELECT id, trigger_at, workspace_id FROM tours WHERE draft_id = ${draftId} ORDER BY trigger_at`
  )

const tourCreated = (draftId: string) =>
  Effect.map(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        sql<{ body: string; workspace_id: string }>`
          SELECT body, workspace_id FROM events
          WHERE type = 'tour-created' AND body LIKE ${`%"draftId":"${draftId}"%`} ORDER BY seq`
    ),
    (rows) => rows.map((row) => ({ workspaceId: row.workspace_id, tour: JSON.parse(row.body).payload.tour as Tour }))
  )

const draftEvents = (draftId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ type: string; body: string }>`
        SELECT type, body FROM events WHERE type <> 'tour-created' AND body LIKE ${`%"${draftId}"%`} ORDER BY seq`
  )

const cursorOf = (draftId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ generated_until: number | null }>`SELECT generated_until FROM drafts WHERE id = ${draftId}`,
      (rows) => rows[0]?.generated_until ?? null
    )
  )

/** Every trigger instant (epoch seconds) of the daily master in `[from, to)`. */
const dailyTriggers = (fromIso: string, days: number) =>
  Array.from({ length: days }, (_, day) => at(fromIso) + 6 * 3600 + day * 86_400)

/** Asserts one tour per trigger, exactly the expected triggers, and one event per tour. */
const assertExactlyOnce = (draftId: string, expected: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const tours = yield* storedTours(draftId)
    assert.deepStrictEqual(
      tours.map((tour) => tour.trigger_at),
      expected
    )
    const events = yield* tourCreated(draftId)
    assert.deepStrictEqual(events.map((event) => event.tour.id).sort(), tours.map((tour) => tour.id).sort())
  })

const quiet = Logger.withMinimumLogLevel(LogLevel.None)

forEachBackend(
  "Tours storage",
  (database) =>
    Layer.mergeAll(
      PgRecurringMasterRepository.layer,
      TourRepositoryPg.layer,
      VehicleClass.layerFromList(referenceData.vehicleClasses)
    ).pipe(
      Layer.provideMerge(DraftServiceLayer),
      Layer.provideMerge(
        Layer.mergeAll(
          DraftRepository.layer,
          EventOutbox.layer,
          ReferenceData.layerMemory(referenceData),
          ProductEvaluator.layerReference
        )
      ),
      Layer.provideMerge(database)
    ),
  (it) => {
    it.effect("generates each due tour once with its tour-created event, and moves the cursor", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        const id = yield* activeMaster(wsA)
        const generator = yield* TourGenerator.make()
        const first = yield* generator.run
        assert.strictEqual(first.failed, 0)
        yield* assertExactlyOnce(id, dailyTriggers("2027-01-04T00:00:00Z", 7))
        assert.strictEqual(yield* cursorOf(id), at("2027-01-11T00:00:00Z"))

        const events = yield* tourCreated(id)
        assert.isTrue(events.every((event) => event.workspaceId === "ws-a"))
        const tour = events[0]!.tour
        assert.deepStrictEqual(
          { ...tour, id: "x" },
          {
            id: "x",
            status: "planned",
            substatus: null,
            name: "Daily Monday 2027-01-04",
            draftId: id,
            triggerAt: at("2027-01-04T06:00:00Z"),
            triggerDate: "2027-01-04",
            timezone: "UTC",
            vehicleClass: "vc_12t",
            vehicleClassReason: "preserved",
            stops: [
              {
                address: { city: "Hamburg" },
                dayOffset: 0,
                window: { startsAt: at("2027-01-04T06:00:00Z"), endsAt: at("2027-01-04T08:00:00Z") }
              },
              {
                address: { city: "München" },
                dayOffset: 1,
                window: { startsAt: at("2027-01-05T12:00:00Z"), endsAt: at("2027-01-05T14:00:00Z") }
              }
            ],
            properties: {},
            createdAt: at("2027-01-04T00:00:00Z")
          }
        )

        // The same instant again: nothing new. Two days later: only the new slice.
        assert.strictEqual((yield* generator.run).toursCreated, 0)
        yield* setNow("2027-01-06T00:00:00Z")
        assert.strictEqual((yield* generator.runMaster({ workspaceId: wsA, id })).created.length, 2)
        yield* assertExactlyOnce(id, dailyTriggers("2027-01-04T00:00:00Z", 9))
        assert.strictEqual(yield* cursorOf(id), at("2027-01-13T00:00:00Z"))
      })
    )

    it.effect("reads tours per workspace, in trigger order, page by page", () =>
      Effect.gen(function* () {
        yield* setNow("2027-02-01T00:00:00Z")
        const id = yield* activeMaster(wsA)
        const other = yield* activeMaster(wsA, { cronExpressions: ["30 5 * * *"] })
        yield* (yield* TourGenerator.make()).run
        const query = yield* TourQuery
        const tours = (yield* storedTours(id)).map((row) => row.id)

        const one = yield* query.get(wsA, tours[0]!)
        assert.strictEqual(Option.getOrThrow(one).draftId, id)
        assert.isTrue(Option.isNone(yield* query.get(wsB, tours[0]!)))
        assert.isTrue(Option.isNone(yield* query.get(wsA, "tour_missing")))
        assert.deepStrictEqual(yield* query.list(wsB, { draftId: id, limit: 100 }), { data: [], nextCursor: null })

        const seen: Array<string> = []
        let after: Parameters<typeof query.list>[1]["after"]
        for (let page = 0; page < 10; page++) {
          const result = yield* query.list(wsA, { draftId: id, limit: 3, after })
          seen.push(...result.data.map((tour) => tour.id))
          if (result.nextCursor === null) break
          const last = result.data[result.data.length - 1]!
          after = { triggerAt: last.triggerAt, id: last.id }
        }
        assert.deepStrictEqual(seen, tours)

        // Without a draft id: every tour of the workspace, both masters interleaved by trigger.
        const all = yield* query.list(wsA, { limit: 100 })
        const mine = all.data.filter((tour) => tour.draftId === id || tour.draftId === other)
        assert.strictEqual(mine.length, 14)
        const triggers = all.data.map((tour) => tour.triggerAt)
        assert.deepStrictEqual(
          triggers,
          [...triggers].sort((a, b) => a - b)
        )
      })
    )

    it.effect("insertIfAbsent stores a (draft, trigger) once and reports only the new tours", () =>
      Effect.gen(function* () {
        yield* setNow("2027-03-01T00:00:00Z")
        const id = yield* activeMaster(wsA)
        const master = { workspaceId: wsA, id }
        const repository = yield* TourRepository
        const existing = (yield* (yield* TourQuery).list(wsA, { draftId: id, limit: 100 })).data
        assert.strictEqual(existing.length, 0)
        const make = (tourId: string, day: number): Tour => ({
          id: tourId,
          status: "planned",
          substatus: null,
          name: null,
          draftId: id,
          triggerAt: at("2027-03-10T06:00:00Z") + day * 86_400,
          triggerDate: "2027-03-10",
          timezone: "UTC",
          vehicleClass: "vc_12t",
          vehicleClassReason: "preserved",
          stops: [],
          properties: {},
          createdAt: at("2027-03-01T00:00:00Z")
        })
        const first = yield* repository.insertIfAbsent(master, [make("tour_a", 0), make("tour_b", 1)])
        assert.deepStrictEqual(
          first.map((tour) => tour.id),
          ["tour_a", "tour_b"]
        )
        const second = yield* repository.insertIfAbsent(master, [
          make("tour_c", 2),
          make("tour_b2", 1),
          make("tour_d", 3)
        ])
        assert.deepStrictEqual(
          second.map((tour) => tour.id),
          ["tour_c", "tour_d"]
        )
        assert.deepStrictEqual(yield* repository.insertIfAbsent(master, []), [])
        assert.deepStrictEqual(
          (yield* storedTours(id)).map((row) => row.id),
          ["tour_a", "tour_b", "tour_c", "tour_d"]
        )
      })
    )

    it.effect("two generators interleaved on one database produce each tour once", () =>
      Effect.gen(function* () {
        yield* setNow("2027-04-01T00:00:00Z")
        const ids = yield* Effect.forEach([1, 2, 3, 4, 5, 6], () => activeMaster(wsA))
        const one = yield* TourGenerator.make({ maxToursPerMaster: 4 })
        const two = yield* TourGenerator.make({ maxToursPerMaster: 4 })
        // Each round both run at once over the same masters; between rounds a day passes.
        for (let day = 0; day < 5; day++) {
          yield* setNow(`2027-04-0${1 + day}T00:00:00Z`)
          for (let round = 0; round < 3; round++) {
            const [a, b] = yield* Effect.all([one.run, two.run], { concurrency: 2 })
            assert.strictEqual(a.failed + b.failed, 0)
          }
        }
        for (const id of ids) yield* assertExactlyOnce(id, dailyTriggers("2027-04-01T00:00:00Z", 11))
      })
    )

    it.effect("claim skips a master whose row another transaction holds (SKIP LOCKED)", () =>
      Effect.gen(function* () {
        yield* setNow("2027-05-01T00:00:00Z")
        const id = yield* activeMaster(wsA)
        const masters = yield* RecurringMasterRepository
        const sql = yield* SqlClient.SqlClient
        const claimed = yield* Transactor.withTransaction(masters.claim({ workspaceId: wsA, id }))
        assert.strictEqual(Option.getOrThrow(claimed).status, "active")
        assert.isTrue(Option.isNone(yield* masters.claim({ workspaceId: wsB, id })))
        const pglite = (yield* sql<{ version: string }>`SELECT version()`)[0]!.version.includes("PGlite")
        // PGlite is one session (one pooled connection): a second transaction cannot run
        // while the first holds the row, so the lock is observable on PostgreSQL only.
        if (pglite) return
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(
          Transactor.withTransaction(
            Effect.zipRight(
              sql`SELECT 1 FROM drafts WHERE id = ${id} FOR UPDATE`,
              Effect.zipRight(Deferred.succeed(locked, undefined), Deferred.await(release))
            )
          )
        )
        yield* Deferred.await(locked)
        const whileHeld = yield* Transactor.withTransaction(masters.claim({ workspaceId: wsA, id }))
        assert.isTrue(Option.isNone(whileHeld))
        const generator = yield* TourGenerator.make()
        const outcome = yield* generator.runMaster({ workspaceId: wsA, id })
        assert.strictEqual(outcome.status, "skipped")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        assert.strictEqual((yield* generator.runMaster({ workspaceId: wsA, id })).created.length, 7)
      })
    )

    it.effect(
      "a failure injected after inserting rolls the master back; the next run has no duplicate and no gap",
      () =>
        Effect.gen(function* () {
          yield* setNow("2027-06-01T00:00:00Z")
          const id = yield* activeMaster(wsA)
          const repository = yield* TourRepository
          let crashes = 1
          const crashing = TourRepository.of({
            insertIfAbsent: (master, tours) =>
              Effect.tap(repository.insertIfAbsent(master, tours), () =>
                crashes-- > 0 ? Effect.die(new Error("process killed after insert")) : Effect.void
              )
          })
          const generator = yield* TourGenerator.make().pipe(Effect.provideService(TourRepository, crashing))
          const ref = { workspaceId: wsA, id }
          assert.strictEqual((yield* generator.runMaster(ref).pipe(quiet)).status, "failed")
          assert.deepStrictEqual(yield* storedTours(id), [])
          assert.deepStrictEqual(yield* tourCreated(id), [])
          assert.isNull(yield* cursorOf(id))

          assert.strictEqual((yield* generator.runMaster(ref)).status, "generated")
          yield* assertExactlyOnce(id, dailyTriggers("2027-06-01T00:00:00Z", 7))
          assert.strictEqual(yield* cursorOf(id), at("2027-06-08T00:00:00Z"))
        })
    )

    it.effect("tours committed without their cursor (a crash between the two) are not generated twice", () =>
      Effect.gen(function* () {
        yield* setNow("2027-07-01T00:00:00Z")
        const id = yield* activeMaster(wsA)
        const masters = yield* RecurringMasterRepository
        let crashes = 1
        const crashingAdvance = RecurringMasterRepository.of({
          ...masters,
          advance: (ref, cursor) =>
            crashes-- > 0
              ? Effect.die(new Error("process killed before the cursor moved"))
              : masters.advance(ref, cursor)
        })
        // No transaction around a master: each statement commits alone, as a store without
        // transactions would, so the tours survive the crash and the cursor does not.
        const autocommit = Transactor.Transactor.of({ withTransaction: (self) => self })
        const generator = yield* TourGenerator.make({ maxToursPerMaster: 3 }).pipe(
          Effect.provideService(RecurringMasterRepository, crashingAdvance),
          Effect.provideService(Transactor.Transactor, autocommit)
        )
        const ref = { workspaceId: wsA, id }
        assert.strictEqual((yield* generator.runMaster(ref).pipe(quiet)).status, "failed")
        assert.strictEqual((yield* storedTours(id)).length, 3)
        assert.isNull(yield* cursorOf(id))
        // Runs until nothing is left: the first one re-expands the stored batch and inserts nothing.
        const created: Array<number> = []
        for (let run = 0; run < 6; run++) created.push((yield* generator.runMaster(ref)).created.length)
        assert.deepStrictEqual(created, [0, 3, 1, 0, 0, 0])
        yield* assertExactlyOnce(id, dailyTriggers("2027-07-01T00:00:00Z", 7))
      })
    )

    it.effect("ends a master whose window has passed, as the system, after its last tours", () =>
      Effect.gen(function* () {
        yield* setNow("2027-08-01T00:00:00Z")
        const running = yield* activeMaster(wsA, { leadTimeDays: 1, endsAt: at("2027-08-04T00:00:00Z") })
        const paused = yield* activeMaster(wsA, { leadTimeDays: 1, endsAt: at("2027-08-04T00:00:00Z") })
        const drafts = yield* DraftService
        const generator = yield* TourGenerator.make()
        yield* generator.run
        yield* drafts.act(paused, { type: "pause-recurring" }, apiKeyActor("env-1")).pipe(as(wsA))
        yield* setNow("2027-08-05T00:00:00Z")
        const summary = yield* generator.run
        assert.strictEqual(summary.ended, 2)
        // The running one got its last tours (triggers before endsAt) before ending.
        yield* assertExactlyOnce(running, dailyTriggers("2027-08-01T00:00:00Z", 3))
        yield* assertExactlyOnce(paused, dailyTriggers("2027-08-01T00:00:00Z", 1))
        for (const id of [running, paused]) {
          assert.strictEqual((yield* drafts.get(id).pipe(as(wsA))).status, "ended-recurring")
          const events = yield* draftEvents(id)
          const ended = events.slice(-2)
          assert.deepStrictEqual(
            ended.map((event) => event.type),
            ["transport-draft-recurring-ended", "transport-draft-action-created"]
          )
          assert.deepStrictEqual(JSON.parse(ended[1]!.body).payload.action.actor, { type: "system", id: "system" })
        }
        // Ended masters are no longer claimed; another run changes nothing for them.
        for (const id of [running, paused]) {
          assert.strictEqual((yield* generator.runMaster({ workspaceId: wsA, id })).status, "skipped")
        }
        yield* assertExactlyOnce(running, dailyTriggers("2027-08-01T00:00:00Z", 3))
        const again = yield* Effect.either(
          drafts.act(running, { type: "resume-recurring" }, apiKeyActor("env-1")).pipe(as(wsA))
        )
        assert.isTrue(Either.isLeft(again))
      })
    )
  }
)
