import { assert, describe, it } from "@effect/vitest"
import * as Id from "@waybill/core/Id"
import * as Transactor from "@waybill/core/Transactor"
import * as EventOutbox from "@waybill/events/EventOutbox"
import { Context, Effect, Layer, Logger, LogLevel, Option, TestClock } from "effect"
import * as RecurringMasterRepository from "../../src/RecurringMasterRepository.js"
import type * as Tour from "../../src/Tour.js"
import * as TourGenerator from "../../src/TourGenerator.js"
import * as TourRepository from "../../src/TourRepository.js"
import * as VehicleClass from "../../src/VehicleClass.js"
import { at, CLASSES, master, WORKSPACE } from "../fixtures.js"

type Ports = Layer.Layer<
  | RecurringMasterRepository.RecurringMasterRepository
  | RecurringMasterRepository.MemoryMasters
  | TourRepository.TourRepository
  | TourRepository.MemoryTours
  | EventOutbox.EventOutbox
  | EventOutbox.MemoryEventLog
  | Transactor.Transactor
  | VehicleClass.VehicleClassPolicy
>

const ports = (overrides?: {
  readonly masters?: Layer.Layer<
    RecurringMasterRepository.RecurringMasterRepository | RecurringMasterRepository.MemoryMasters
  >
  readonly repository?: Layer.Layer<TourRepository.TourRepository | TourRepository.MemoryTours>
  readonly transactor?: Layer.Layer<Transactor.Transactor>
  readonly policy?: Layer.Layer<VehicleClass.VehicleClassPolicy>
}): Ports =>
  Layer.mergeAll(
    overrides?.masters ?? RecurringMasterRepository.layerMemory,
    overrides?.repository ?? TourRepository.layerMemory,
    EventOutbox.layerMemory,
    overrides?.transactor ?? Transactor.layerMemory,
    overrides?.policy ?? VehicleClass.layerFromList(CLASSES)
  )

const withGenerator = (layer: Ports, options?: TourGenerator.Options) =>
  TourGenerator.layer(options).pipe(Layer.provideMerge(layer))

const setNow = (iso: string) => TestClock.setTime(at(iso) * 1000)

const state = Effect.gen(function* () {
  const tours = (yield* (yield* TourRepository.MemoryTours).all).map((stored) => stored.tour)
  const events = yield* (yield* EventOutbox.MemoryEventLog).all
  return { tours, events }
})

const dates = (tours: ReadonlyArray<Tour.Tour>) => tours.map((tour) => new Date(tour.triggerAt * 1000).toISOString())

const masterRef = (m: { readonly id: string }) => ({ workspaceId: WORKSPACE, id: m.id })

const quiet = Logger.withMinimumLogLevel(LogLevel.None)

const berlinWeekdays = master({
  name: "Line {{ weekday }}",
  schedule: { cronExpressions: ["0 6 * * 1-5"], timezone: "Europe/Berlin", leadTimeDays: 7 }
})

const dailyUtc = (extra: Record<string, unknown> = {}, id = "drf_daily") =>
  master({ id, schedule: { cronExpressions: ["0 6 * * *"], timezone: "UTC", leadTimeDays: 1, ...extra } })

/** Wraps the in-memory masters so that `advance` crashes the first time it is called. */
const crashingAdvance: Layer.Layer<
  RecurringMasterRepository.RecurringMasterRepository | RecurringMasterRepository.MemoryMasters
> = Layer.effectContext(
  Effect.gen(function* () {
    const inner = yield* RecurringMasterRepository.RecurringMasterRepository
    const control = yield* RecurringMasterRepository.MemoryMasters
    let crashed = false
    const port = RecurringMasterRepository.RecurringMasterRepository.of({
      ...inner,
      advance: (ref, cursor) =>
        crashed
          ? inner.advance(ref, cursor)
          : Effect.suspend(() => {
              crashed = true
              return Effect.die(new Error("process killed"))
            })
    })
    return Context.make(RecurringMasterRepository.RecurringMasterRepository, port).pipe(
      Context.add(RecurringMasterRepository.MemoryMasters, control)
    )
  })
).pipe(Layer.provide(RecurringMasterRepository.layerMemory))

/** Yields to other fibers between every step, so that two generators really interleave. */
const interleaving: Layer.Layer<
  RecurringMasterRepository.RecurringMasterRepository | RecurringMasterRepository.MemoryMasters
> = Layer.effectContext(
  Effect.gen(function* () {
    const inner = yield* RecurringMasterRepository.RecurringMasterRepository
    const control = yield* RecurringMasterRepository.MemoryMasters
    const port = RecurringMasterRepository.RecurringMasterRepository.of({
      list: (now) => Effect.zipLeft(inner.list(now), Effect.yieldNow()),
      claim: (ref) => Effect.zipLeft(inner.claim(ref), Effect.yieldNow()),
      advance: (ref, cursor) => Effect.zipRight(Effect.yieldNow(), inner.advance(ref, cursor)),
      end: (ref, when) => Effect.zipRight(Effect.yieldNow(), inner.end(ref, when))
    })
    return Context.make(RecurringMasterRepository.RecurringMasterRepository, port).pipe(
      Context.add(RecurringMasterRepository.MemoryMasters, control)
    )
  })
).pipe(Layer.provide(RecurringMasterRepository.layerMemory))

const noLocks = Layer.succeed(Transactor.Transactor, { withTransaction: (self) => self })

/** Counts the calls that need a transaction (claims) and the writes (advances). */
const calls = { claims: 0, advances: 0, refsOnly: false }
const counting: Layer.Layer<
  RecurringMasterRepository.RecurringMasterRepository | RecurringMasterRepository.MemoryMasters
> = Layer.effectContext(
  Effect.gen(function* () {
    const inner = yield* RecurringMasterRepository.RecurringMasterRepository
    const control = yield* RecurringMasterRepository.MemoryMasters
    calls.claims = 0
    calls.advances = 0
    calls.refsOnly = false
    const port = RecurringMasterRepository.RecurringMasterRepository.of({
      ...inner,
      list: (now) =>
        calls.refsOnly
          ? Effect.map(inner.list(now), (all) => all.map(RecurringMasterRepository.refOf))
          : inner.list(now),
      claim: (ref) =>
        Effect.zipRight(
          Effect.sync(() => calls.claims++),
          inner.claim(ref)
        ),
      advance: (ref, cursor) =>
        Effect.zipRight(
          Effect.sync(() => calls.advances++),
          inner.advance(ref, cursor)
        )
    })
    return Context.make(RecurringMasterRepository.RecurringMasterRepository, port).pipe(
      Context.add(RecurringMasterRepository.MemoryMasters, control)
    )
  })
).pipe(Layer.provide(RecurringMasterRepository.layerMemory))

/** The generator scenarios, driven by `TestClock`. */
export const generatorSuite = () => {
  describe("TourGenerator", () => {
    it.effect("generates every due tour once, each with its tour-created event", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        yield* control.activate(berlinWeekdays, at("2027-01-04T00:00:00Z"))

        const summary = yield* generator.run
        assert.deepStrictEqual(summary, { masters: 1, toursCreated: 5, skipped: 0, ended: 0, failed: 0 })
        const first = yield* state
        assert.deepStrictEqual(dates(first.tours), [
          "2027-01-04T05:00:00.000Z",
          "2027-01-05T05:00:00.000Z",
          "2027-01-06T05:00:00.000Z",
          "2027-01-07T05:00:00.000Z",
          "2027-01-08T05:00:00.000Z"
        ])
        const tour = first.tours[0]!
        assert.isTrue(Id.isId("tour", tour.id))
        assert.deepStrictEqual(
          { ...tour, id: "x" },
          {
            id: "x",
            status: "planned",
            substatus: null,
            name: "Line Monday",
            draftId: "drf_master",
            triggerAt: at("2027-01-04T05:00:00Z"),
            triggerDate: "2027-01-04",
            timezone: "Europe/Berlin",
            vehicleClass: "vc_3t5",
            vehicleClassReason: "recalculated",
            stops: [
              {
                address: { name: "Stop 1", countryCode: "DEU" },
                dayOffset: 0,
                window: { startsAt: at("2027-01-04T07:00:00Z"), endsAt: at("2027-01-04T09:00:00Z") }
              },
              {
                address: { name: "Stop 2", countryCode: "DEU" },
                dayOffset: 0,
                window: { startsAt: at("2027-01-04T13:00:00Z"), endsAt: at("2027-01-04T15:00:00Z") }
              }
            ],
            properties: {},
            createdAt: at("2027-01-04T00:00:00Z")
          }
        )
        assert.deepStrictEqual(
          first.events.map((event) => [event.type, event.workspaceId]),
          first.tours.map(() => ["tour-created", WORKSPACE])
        )
        assert.deepStrictEqual(
          first.events.map((event) => event.payload),
          first.tours.map((tour) => ({ tour }))
        )
        assert.deepStrictEqual(
          first.events.map((event) => event.orderingKey),
          first.tours.map((tour) => tour.id),
          "each keyed by its tour"
        )
        const stored = yield* control.get(masterRef(berlinWeekdays))
        assert.strictEqual(Option.getOrThrow(stored).cursor, at("2027-01-11T00:00:00Z"))
      }).pipe(Effect.provide(withGenerator(ports())))
    )

    it.effect("re-runs are idempotent, and a later run expands only the new slice", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        yield* control.activate(berlinWeekdays, at("2027-01-04T00:00:00Z"))
        yield* generator.run
        const again = yield* generator.run
        assert.strictEqual(again.toursCreated, 0)
        assert.strictEqual((yield* state).events.length, 5)
        yield* TestClock.adjust("1 day")
        const next = yield* generator.run
        assert.strictEqual(next.toursCreated, 1)
        const after = yield* state
        assert.strictEqual(after.tours.length, 6)
        assert.strictEqual(after.events.length, 6)
        assert.strictEqual(after.tours[5]!.triggerDate, "2027-01-11")
      }).pipe(Effect.provide(withGenerator(ports())))
    )

    it.effect("a crash between the inserts and the cursor advance duplicates nothing", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        yield* control.activate(berlinWeekdays, at("2027-01-04T00:00:00Z"))
        const crashed = yield* generator.run.pipe(quiet)
        assert.strictEqual(crashed.failed, 1)
        // The in-memory stores cannot roll back: the tours stayed, the cursor did not move.
        assert.isNull(Option.getOrThrow(yield* control.get(masterRef(berlinWeekdays))).cursor)
        const retried = yield* generator.run
        assert.deepStrictEqual(retried, { masters: 1, toursCreated: 0, skipped: 0, ended: 0, failed: 0 })
        const after = yield* state
        assert.strictEqual(after.tours.length, 5)
        assert.strictEqual(new Set(after.tours.map((tour) => tour.triggerAt)).size, 5)
        assert.strictEqual(after.events.length, 5)
        assert.strictEqual(
          Option.getOrThrow(yield* control.get(masterRef(berlinWeekdays))).cursor,
          at("2027-01-11T00:00:00Z")
        )
      }).pipe(Effect.provide(withGenerator(ports({ masters: crashingAdvance }))))
    )

    it.effect("two generators interleaved on one master store and announce each tour once", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        yield* control.activate(berlinWeekdays, at("2027-01-04T00:00:00Z"))
        const one = yield* TourGenerator.make()
        const two = yield* TourGenerator.make()
        const [a, b] = yield* Effect.all([one.run, two.run], { concurrency: 2 })
        assert.strictEqual(a.toursCreated + b.toursCreated, 5)
        yield* TestClock.adjust("1 day")
        const [c, d] = yield* Effect.all([two.run, one.runMaster(masterRef(berlinWeekdays))], { concurrency: 2 })
        assert.strictEqual(c.toursCreated + d.created.length, 1)
        const after = yield* state
        assert.strictEqual(after.tours.length, 6)
        assert.strictEqual(new Set(after.tours.map((tour) => tour.triggerAt)).size, 6)
        assert.deepStrictEqual(
          after.events.map((event) => (event.payload as { tour: Tour.Tour }).tour.id).sort(),
          after.tours.map((tour) => tour.id).sort()
        )
      }).pipe(Effect.provide(ports({ masters: interleaving, transactor: noLocks })))
    )

    it.effect("a master with nothing due costs no transaction and no write", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        const m = dailyUtc()
        yield* control.activate(m, at("2027-01-04T00:00:00Z"))
        yield* generator.run // Jan 4 06:00, cursor Jan 5 00:00
        assert.deepStrictEqual(calls, { claims: 1, advances: 1, refsOnly: false })
        for (const time of ["2027-01-04T00:01:00Z", "2027-01-04T03:00:00Z", "2027-01-04T06:00:00Z"]) {
          yield* setNow(time)
          const idle = yield* generator.run
          assert.deepStrictEqual(idle, { masters: 1, toursCreated: 0, skipped: 0, ended: 0, failed: 0 })
        }
        assert.deepStrictEqual(calls, { claims: 1, advances: 1, refsOnly: false })
        // The cursor stayed at Jan 5 00:00; Jan 5 06:00 enters the one-day horizon just after Jan 4 06:00.
        yield* setNow("2027-01-04T06:00:01Z")
        assert.strictEqual((yield* generator.run).toursCreated, 1)
        assert.deepStrictEqual(calls, { claims: 2, advances: 2, refsOnly: false })
        assert.deepStrictEqual(dates((yield* state).tours), ["2027-01-04T06:00:00.000Z", "2027-01-05T06:00:00.000Z"])
      }).pipe(Effect.provide(withGenerator(ports({ masters: counting }))))
    )

    it.effect("a port that lists bare refs gets every master claimed each run", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        calls.refsOnly = true
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        yield* control.activate(dailyUtc(), at("2027-01-04T00:00:00Z"))
        yield* generator.run
        yield* setNow("2027-01-04T00:01:00Z")
        assert.strictEqual((yield* generator.run).toursCreated, 0)
        assert.deepStrictEqual(calls, { claims: 2, advances: 2, refsOnly: true })
        assert.strictEqual((yield* state).tours.length, 1)
      }).pipe(Effect.provide(withGenerator(ports({ masters: counting }))))
    )

    it.effect("never generates triggers before the activation", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T07:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        const m = dailyUtc()
        yield* control.activate(m, at("2027-01-04T07:00:00Z"))
        const outcome = yield* generator.runMaster(masterRef(m))
        assert.strictEqual(outcome.status, "generated")
        assert.deepStrictEqual(dates(outcome.created), ["2027-01-05T06:00:00.000Z"])
        const unknown = yield* generator.runMaster({ workspaceId: WORKSPACE, id: "drf_unknown" })
        assert.strictEqual(unknown.status, "skipped")
      }).pipe(Effect.provide(withGenerator(ports())))
    )

    it.effect("a paused master generates nothing and resumes without back-fill", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        const m = dailyUtc()
        yield* control.activate(m, at("2027-01-04T00:00:00Z"))
        yield* generator.run
        yield* control.pause(masterRef(m))
        yield* setNow("2027-01-08T00:00:00Z")
        assert.strictEqual((yield* generator.run).masters, 0)
        assert.strictEqual((yield* generator.runMaster(masterRef(m))).status, "idle")
        yield* control.resume(masterRef(m), at("2027-01-08T00:00:00Z"))
        yield* generator.run
        const after = yield* state
        assert.deepStrictEqual(dates(after.tours), ["2027-01-04T06:00:00.000Z", "2027-01-08T06:00:00.000Z"])
        assert.strictEqual(after.events.length, 2)
      }).pipe(Effect.provide(withGenerator(ports())))
    )

    it.effect("ends a master by itself once endsAt has passed, after its last tours", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        const m = dailyUtc({ leadTimeDays: 3, endsAt: at("2027-01-06T06:00:00Z") })
        yield* control.activate(m, at("2027-01-04T00:00:00Z"))
        assert.strictEqual((yield* generator.run).ended, 0)
        yield* setNow("2027-01-06T05:59:59Z")
        assert.strictEqual((yield* generator.run).ended, 0)
        yield* setNow("2027-01-06T06:00:00Z")
        assert.deepStrictEqual(yield* generator.run, { masters: 1, toursCreated: 0, skipped: 0, ended: 1, failed: 0 })
        const stored = Option.getOrThrow(yield* control.get(masterRef(m)))
        assert.strictEqual(stored.status, "ended")
        assert.strictEqual(stored.endedAt, at("2027-01-06T06:00:00Z"))
        assert.strictEqual((yield* generator.run).masters, 0)
        assert.deepStrictEqual(dates((yield* state).tours), ["2027-01-04T06:00:00.000Z", "2027-01-05T06:00:00.000Z"])
      }).pipe(Effect.provide(withGenerator(ports())))
    )

    it.effect("a paused master whose window has passed ends too", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        const m = dailyUtc({ endsAt: at("2027-01-10T00:00:00Z") })
        yield* control.activate(m, at("2027-01-04T00:00:00Z"))
        yield* control.pause(masterRef(m))
        yield* setNow("2027-01-11T00:00:00Z")
        assert.strictEqual((yield* generator.run).ended, 1)
        assert.strictEqual(Option.getOrThrow(yield* control.get(masterRef(m))).status, "ended")
        assert.strictEqual((yield* state).tours.length, 0)
      }).pipe(Effect.provide(withGenerator(ports())))
    )

    it.effect("bounds the tours per master and run, continuing where it stopped, ending only when complete", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T12:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        const m = master({
          id: "drf_hourly",
          schedule: {
            cronExpressions: ["0 * * * *"],
            timezone: "UTC",
            leadTimeDays: 0,
            endsAt: at("2027-01-04T10:00:00Z")
          }
        })
        yield* control.activate(m, at("2027-01-04T00:00:00Z"))
        const created: Array<number> = []
        const ended: Array<number> = []
        for (let i = 0; i < 4; i++) {
          const summary = yield* generator.run
          created.push(summary.toursCreated)
          ended.push(summary.ended)
        }
        assert.deepStrictEqual(created, [4, 4, 2, 0])
        assert.deepStrictEqual(ended, [0, 0, 1, 0])
        const tours = (yield* state).tours
        assert.strictEqual(new Set(tours.map((tour) => tour.triggerAt)).size, 10)
      }).pipe(Effect.provide(withGenerator(ports(), { maxToursPerMaster: 4 })))
    )

    it.effect("a master stored around validation (an expression that does not parse) fails alone", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        const good = dailyUtc({}, "drf_good")
        yield* control.activate(
          { ...good, id: "drf_corrupt", schedule: { ...good.schedule, cronExpressions: ["99 * * * *"] } },
          at("2027-01-04T00:00:00Z")
        )
        yield* control.activate(good, at("2027-01-04T00:00:00Z"))
        const summary = yield* generator.run.pipe(quiet)
        assert.deepStrictEqual(summary, { masters: 2, toursCreated: 1, skipped: 0, ended: 0, failed: 1 })
      }).pipe(Effect.provide(withGenerator(ports())))
    )

    it.effect("a master that fails is rolled back and logged; the others go on", () =>
      Effect.gen(function* () {
        yield* setNow("2027-01-04T00:00:00Z")
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        yield* control.activate(dailyUtc({}, "drf_bad"), at("2027-01-04T00:00:00Z"))
        yield* control.activate(dailyUtc({}, "drf_good"), at("2027-01-04T00:00:00Z"))
        const summary = yield* generator.run.pipe(quiet)
        assert.deepStrictEqual(summary, { masters: 2, toursCreated: 1, skipped: 0, ended: 0, failed: 1 })
        assert.deepStrictEqual(
          (yield* state).tours.map((tour) => tour.draftId),
          ["drf_good"]
        )
      }).pipe(
        Effect.provide(
          withGenerator(
            ports({
              policy: Layer.succeed(VehicleClass.VehicleClassPolicy, {
                recalculate: (request) =>
                  request.master.id === "drf_bad"
                    ? Effect.die(new Error("reference data unavailable"))
                    : Effect.succeed(VehicleClass.choose(CLASSES, request.master.vehicleClass, request.totalWeightKg))
              })
            })
          )
        )
      )
    )
  })
}
