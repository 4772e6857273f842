import { join } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import { WorkspaceId } from "@waybill/core/Workspace"
import { TourGenerator } from "@waybill/recurring/TourGenerator"
import * as AdjustableClock from "@waybill/server/AdjustableClock"
import * as Generation from "@waybill/server/Generation"
import * as ReferenceDataFile from "@waybill/server/ReferenceDataFile"
import * as Server from "@waybill/server/Server"
import type { DatabaseConfig } from "@waybill/store-pg/Database"
import * as Testing from "@waybill/store-pg/Testing"
import { Context, Effect, Exit, Fiber, Layer, Redacted, Schema, Scope } from "effect"
import { contractMaster } from "./fixtures.js"
import {
  call,
  forEachServer,
  isErrorBody,
  keys,
  type Reply,
  type ServerServices,
  testConfig,
  testLog
} from "./harness.js"

// One clock for every server of this file: tests set it to the instants they need.
const clock = AdjustableClock.make()
const setNow = (iso: string) => clock.setTime(Date.parse(iso))
const at = (iso: string) => Date.parse(iso) / 1000
const workspaceA = Schema.decodeSync(WorkspaceId)("ws-a")

/** A master every day at 06:00 UTC, `{{ date }}` in its name. */
const dailyMaster = (schedule: Record<string, unknown> = {}) => ({
  ...contractMaster(),
  name: "Daily {{ date }}",
  recurringSchedule: { cronExpressions: ["0 6 * * *"], timezone: "UTC", leadTimeDays: 7, ...schedule }
})

/** The trigger instants of the daily master: `days` days from `fromIso` at 06:00 UTC. */
const daily = (fromIso: string, days: number) =>
  Array.from({ length: days }, (_, day) => at(fromIso) + 6 * 3600 + day * 86_400)

const create = (body: unknown, key: string = keys.a) =>
  Effect.map(call("/drafts", { key, json: body }), (reply) => {
    assert.strictEqual(reply.status, 201, reply.text)
    return reply.body.id as string
  })

const act = (id: string, type: string, key: string = keys.a) =>
  Effect.map(call(`/drafts/${id}/actions`, { key, json: { type } }), (reply) => {
    assert.strictEqual(reply.status, 200, reply.text)
    return reply.body
  })

interface TourBody {
  readonly id: string
  readonly name: string
  readonly draftId: string
  readonly triggerAt: number
  readonly triggerDate: string
  readonly [key: string]: unknown
}

/** Every tour of a master, following the cursor. */
const toursOf = (draftId: string, key: string = keys.a) =>
  Effect.gen(function* () {
    const all: Array<TourBody> = []
    let cursor: string | null = null
    do {
      const reply: Reply = yield* call(
        `/tours?draftId=${draftId}&limit=100${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
        { key }
      )
      assert.strictEqual(reply.status, 200, reply.text)
      all.push(...reply.body.data)
      cursor = reply.body.nextCursor
    } while (cursor !== null)
    return all
  })

const triggersOf = (draftId: string) => Effect.map(toursOf(draftId), (tours) => tours.map((tour) => tour.triggerAt))

/** The outbox rows about a draft, in commit order. */
const outbox = (draftId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ type: string; body: string; workspace_id: string }>`
        SELECT type, body, workspace_id FROM events WHERE body LIKE ${`%"${draftId}"%`} ORDER BY seq`
  )

const tourCreated = (draftId: string) =>
  Effect.map(outbox(draftId), (rows) =>
    rows.filter((row) => row.type === "tour-created").map((row) => JSON.parse(row.body))
  )

/** Runs the server's generator now (as its loop would). */
const runGenerator = Effect.flatMap(TourGenerator, (generator) => generator.run)

/** One tour per expected trigger, nothing else, and one `tour-created` per tour. */
const assertExactlyOnce = (draftId: string, expected: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const tours = yield* toursOf(draftId)
    assert.deepStrictEqual(
      tours.map((tour) => tour.triggerAt),
      expected
    )
    const events = yield* tourCreated(draftId)
    assert.deepStrictEqual(events.map((event) => event.payload.tour.id).sort(), tours.map((tour) => tour.id).sort())
  })

const isPglite = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ version: string }>`SELECT version()`, (rows) => rows[0]!.version.includes("PGlite"))
)

/** The URL of the PostgreSQL database the server under test uses. */
const sameDatabaseUrl = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ name: string }>`SELECT current_database() AS name`, (rows) => {
    const url = new URL(process.env.DATABASE_URL!)
    url.pathname = `/${rows[0]!.name}`
    return url.toString()
  })
)

// The log of the servers tests start themselves, shown after a test that failed.
const log = testLog("the other servers")
log.showOnFailure()

/** 50 ms of the wall clock (the tests' clock is a test clock). */
const aMoment = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))

/** Another server (another process, as far as the database can tell) on a given database. */
const startServer = (database: DatabaseConfig, options: Generation.Options, scope: Scope.Scope) =>
  Effect.flatMap(ReferenceDataFile.load(ReferenceDataFile.defaultPath), (referenceData) =>
    Layer.buildWithScope(
      Server.layer(testConfig(database, { generatorIntervalMs: 3_600_000 }), referenceData, options).pipe(
        Layer.provide(log.layer)
      ),
      scope
    )
  )

forEachServer(
  "tours over HTTP",
  (it) => {
    it.effect("activating the contract's master generates its tours, with names, stop windows and events", () =>
      Effect.gen(function* () {
        yield* setNow("2026-12-31T12:00:00Z")
        const id = yield* create(contractMaster())
        yield* act(id, "activate-recurring")
        // The immediate run has committed before the action's answer.
        const tours = yield* toursOf(id)
        assert.deepStrictEqual(
          tours.map((tour) => [tour.triggerDate, tour.name]),
          [
            ["2027-01-01", "Line Friday"],
            ["2027-01-04", "Line Monday"],
            ["2027-01-05", "Line Tuesday"],
            ["2027-01-06", "Line Wednesday"],
            ["2027-01-07", "Line Thursday"]
          ]
        )
        const first = tours[0]!
        assert.match(first.id, /^tour_[0-9a-z]{26}$/)
        const createdAt = first.createdAt as number
        assert.isTrue(createdAt >= at("2026-12-31T12:00:00Z") && createdAt < at("2026-12-31T12:10:00Z"))
        assert.deepStrictEqual(
          { ...first, id: "tour", createdAt: 0 },
          {
            id: "tour",
            status: "planned",
            substatus: null,
            name: "Line Friday",
            draftId: id,
            triggerAt: at("2027-01-01T05:00:00Z"),
            triggerDate: "2027-01-01",
            timezone: "Europe/Berlin",
            vehicleClass: "vc_12t",
            vehicleClassReason: "preserved",
            stops: [
              {
                address: { city: "Hamburg", country: "DEU" },
                dayOffset: 0,
                window: { startsAt: at("2027-01-01T05:00:00Z"), endsAt: at("2027-01-01T07:00:00Z") }
              },
              {
                address: { city: "Berlin", country: "DEU" },
                dayOffset: 1,
                window: { startsAt: at("2027-01-02T12:00:00Z"), endsAt: at("2027-01-02T14:00:00Z") }
              }
            ],
            properties: {},
            createdAt: 0
          }
        )
        const one = yield* call(`/tours/${first.id}`, { key: keys.a })
        assert.strictEqual(one.status, 200, one.text)
        assert.deepStrictEqual(one.body, first)

        // The outbox: the draft's own events, then one tour-created per tour, in tour order.
        const rows = yield* outbox(id)
        assert.deepStrictEqual(
          rows.map((row) => row.type),
          [
            "transport-drafts-created",
            "transport-draft-recurring-activated",
            "transport-draft-action-created",
            ...tours.map(() => "tour-created")
          ]
        )
        assert.isTrue(rows.every((row) => row.workspace_id === "ws-a"))
        const events = yield* tourCreated(id)
        assert.deepStrictEqual(
          events.map((event) => event.payload),
          tours.map((tour) => ({ tour }))
        )
        assert.deepStrictEqual(Object.keys(events[0]!), ["id", "type", "createdAt", "payload"])

        // Running again at the same time changes nothing.
        yield* runGenerator
        assert.strictEqual((yield* toursOf(id)).length, 5)
        assert.strictEqual((yield* tourCreated(id)).length, 5)
      })
    )

    it.effect("pause: no new tours as time passes; resume: no back-fill; end: no more", () =>
      Effect.gen(function* () {
        yield* setNow("2026-12-31T12:00:00Z")
        const id = yield* create(contractMaster())
        yield* act(id, "activate-recurring")
        const before = ["2027-01-01", "2027-01-04", "2027-01-05", "2027-01-06", "2027-01-07"]
        assert.deepStrictEqual(
          (yield* toursOf(id)).map((tour) => tour.triggerDate),
          before
        )

        yield* act(id, "pause-recurring")
        yield* setNow("2027-01-11T12:00:00Z")
        yield* runGenerator
        assert.deepStrictEqual(
          (yield* toursOf(id)).map((tour) => tour.triggerDate),
          before
        )

        // Resumed on Monday 11 at noon: the 8th and the 11th fell into the pause.
        yield* act(id, "resume-recurring")
        const resumed = [...before, "2027-01-12", "2027-01-13", "2027-01-14", "2027-01-15", "2027-01-18"]
        assert.deepStrictEqual(
          (yield* toursOf(id)).map((tour) => tour.triggerDate),
          resumed
        )
        yield* runGenerator
        assert.strictEqual((yield* toursOf(id)).length, resumed.length)

        yield* act(id, "end-recurring")
        yield* setNow("2027-01-25T12:00:00Z")
        yield* runGenerator
        assert.deepStrictEqual(
          (yield* toursOf(id)).map((tour) => tour.triggerDate),
          resumed
        )
        const events = yield* tourCreated(id)
        assert.strictEqual(events.length, resumed.length)
        assert.strictEqual(new Set(events.map((event) => event.payload.tour.id)).size, resumed.length)
      })
    )

    it.effect("a master whose validity window has passed ends by itself, after its last tours", () =>
      Effect.gen(function* () {
        yield* setNow("2026-12-31T12:00:00Z")
        const id = yield* create(dailyMaster({ leadTimeDays: 2, endsAt: at("2027-01-03T12:00:00Z") }))
        yield* act(id, "activate-recurring")
        assert.deepStrictEqual(yield* triggersOf(id), daily("2027-01-01T00:00:00Z", 2))

        yield* setNow("2027-01-04T00:00:00Z")
        const summary = yield* runGenerator
        assert.isAtLeast(summary.ended, 1)
        yield* assertExactlyOnce(id, daily("2027-01-01T00:00:00Z", 3))
        const draft = yield* call(`/drafts/${id}`, { key: keys.a })
        assert.strictEqual(draft.body.status, "ended-recurring")
        const rows = yield* outbox(id)
        const last = rows.slice(-2)
        assert.deepStrictEqual(
          last.map((row) => row.type),
          ["transport-draft-recurring-ended", "transport-draft-action-created"]
        )
        const action = JSON.parse(last[1]!.body).payload.action
        assert.deepStrictEqual(action.actor, { type: "system", id: "system" })
        assert.deepStrictEqual(action.payload, { type: "end-recurring", reason: "endsAt has passed" })
      })
    )

    it.effect("occurrences: a dry run of the next N days, whatever the status; nothing stored", () =>
      Effect.gen(function* () {
        yield* setNow("2026-12-31T12:00:00Z")
        const id = yield* create(contractMaster())
        const preview = (query: string, key: string = keys.a) => call(`/drafts/${id}/occurrences${query}`, { key })

        const week = yield* preview("?days=7")
        assert.strictEqual(week.status, 200, week.text)
        assert.deepStrictEqual(Object.keys(week.body), ["data"])
        assert.deepStrictEqual(
          week.body.data.map((entry: { triggerDate: string; name: string }) => [entry.triggerDate, entry.name]),
          [
            ["2027-01-01", "Line Friday"],
            ["2027-01-04", "Line Monday"],
            ["2027-01-05", "Line Tuesday"],
            ["2027-01-06", "Line Wednesday"],
            ["2027-01-07", "Line Thursday"]
          ]
        )
        assert.deepStrictEqual(week.body.data[0], {
          triggerAt: at("2027-01-01T05:00:00Z"),
          triggerDate: "2027-01-01",
          name: "Line Friday",
          vehicleClass: "vc_12t",
          stops: [
            { dayOffset: 0, window: { startsAt: at("2027-01-01T05:00:00Z"), endsAt: at("2027-01-01T07:00:00Z") } },
            { dayOffset: 1, window: { startsAt: at("2027-01-02T12:00:00Z"), endsAt: at("2027-01-02T14:00:00Z") } }
          ]
        })
        // Default 14 days: Jan 1, Jan 4–8, Jan 11–14.
        assert.strictEqual((yield* preview("")).body.data.length, 10)
        assert.strictEqual((yield* preview("?days=1")).body.data.length, 1)
        const year = yield* preview("?days=366")
        assert.strictEqual(year.status, 200)
        assert.strictEqual(year.body.data.length, 261)

        for (const bad of ["0", "367", "1.5", "abc", "", "-3"]) {
          const reply = yield* preview(`?days=${bad}`)
          assert.isTrue(isErrorBody(reply, 400, "bad_request"), `${bad}: ${reply.text}`)
          assert.deepStrictEqual(reply.body.issues, [{ path: "days", message: "must be an integer from 1 to 366" }])
        }

        // Nothing was stored by any of it.
        assert.deepStrictEqual(yield* toursOf(id), [])
        assert.deepStrictEqual(
          (yield* outbox(id)).map((row) => row.type),
          ["transport-drafts-created"]
        )

        // Recalculate: 900 kg in all fits the 3.5 t van of the reference data.
        const recalculated = yield* create({
          ...contractMaster(),
          recurringSchedule: { ...contractMaster().recurringSchedule, vehicleClassAdjustmentStrategy: "recalculate" }
        })
        const classes = (yield* call(`/drafts/${recalculated}/occurrences?days=7`, { key: keys.a })).body.data.map(
          (entry: { vehicleClass: string }) => entry.vehicleClass
        )
        assert.deepStrictEqual(classes, ["vc_3t5", "vc_3t5", "vc_3t5", "vc_3t5", "vc_3t5"])

        // Whatever the status: an ended master still previews.
        yield* act(id, "activate-recurring")
        yield* act(id, "end-recurring")
        assert.strictEqual((yield* preview("?days=7")).body.data.length, 5)

        const oneOff = yield* create({ origin: "manual", status: "draft", transportShapeId: "shape_ftl" })
        const notMaster = yield* call(`/drafts/${oneOff}/occurrences`, { key: keys.a })
        assert.isTrue(isErrorBody(notMaster, 400, "bad_request"), notMaster.text)
        assert.deepStrictEqual(
          notMaster.body.issues.map((issue: { path: string }) => issue.path),
          ["id"]
        )
        assert.isTrue(isErrorBody(yield* call("/drafts/drf_missing/occurrences", { key: keys.a }), 404, "not_found"))
        assert.isTrue(isErrorBody(yield* preview("?days=7", keys.b), 404, "not_found"))
        assert.isTrue(isErrorBody(yield* call(`/drafts/${id}/occurrences`), 401, "unauthorized"))
      })
    )

    it.effect("another workspace's tours are 404, and its draft id lists nothing", () =>
      Effect.gen(function* () {
        yield* setNow("2026-12-31T12:00:00Z")
        const id = yield* create(contractMaster())
        yield* act(id, "activate-recurring")
        const tours = yield* toursOf(id)
        assert.strictEqual(tours.length, 5)
        const foreign = yield* call(`/tours/${tours[0]!.id}`, { key: keys.b })
        assert.isTrue(isErrorBody(foreign, 404, "not_found"), foreign.text)
        const listed = yield* call(`/tours?draftId=${id}`, { key: keys.b })
        assert.deepStrictEqual(listed.body, { data: [], nextCursor: null })
        const everything = yield* call("/tours?limit=100", { key: keys.b })
        assert.strictEqual(everything.status, 200)
        assert.isFalse(everything.body.data.some((tour: TourBody) => tour.draftId === id))
        assert.isTrue(isErrorBody(yield* call("/tours/tour_missing", { key: keys.a }), 404, "not_found"))
        assert.isTrue(isErrorBody(yield* call(`/tours/${tours[0]!.id}`), 401, "unauthorized"))
        assert.isTrue(isErrorBody(yield* call("/tours"), 401, "unauthorized"))
      })
    )

    it.effect("GET /tours pages in trigger order; a bad limit or cursor is 400 with every issue", () =>
      Effect.gen(function* () {
        yield* setNow("2027-03-01T00:00:00Z")
        const id = yield* create(dailyMaster({ leadTimeDays: 30 }))
        yield* act(id, "activate-recurring")
        const seen: Array<number> = []
        let cursor: string | null = null
        let pages = 0
        do {
          const reply: Reply = yield* call(
            `/tours?draftId=${id}&limit=7${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
            { key: keys.a }
          )
          assert.strictEqual(reply.status, 200, reply.text)
          assert.isAtMost(reply.body.data.length, 7)
          seen.push(...reply.body.data.map((tour: TourBody) => tour.triggerAt))
          cursor = reply.body.nextCursor
          pages++
        } while (cursor !== null)
        assert.strictEqual(pages, 5)
        assert.deepStrictEqual(seen, daily("2027-03-01T00:00:00Z", 30))
        // The default page is 20.
        assert.strictEqual((yield* call(`/tours?draftId=${id}`, { key: keys.a })).body.data.length, 20)

        for (const [query, paths] of [
          ["limit=0", ["limit"]],
          ["limit=101", ["limit"]],
          ["limit=abc", ["limit"]],
          ["cursor=not-a-cursor", ["cursor"]],
          ["limit=0&cursor=bm9wZQ", ["limit", "cursor"]]
        ] as const) {
          const reply = yield* call(`/tours?draftId=${id}&${query}`, { key: keys.a })
          assert.isTrue(isErrorBody(reply, 400, "bad_request"), `${query}: ${reply.text}`)
          assert.deepStrictEqual(
            reply.body.issues.map((issue: { path: string }) => issue.path),
            paths
          )
        }
      })
    )

    it.effect("two generator loops on one database produce each tour once", () =>
      Effect.gen(function* () {
        yield* setNow("2027-05-01T00:00:00Z")
        const ids = yield* Effect.forEach([1, 2, 3, 4], () => create(dailyMaster()))
        for (const id of ids) yield* act(id, "activate-recurring")
        const scope = yield* Scope.make()
        // A second process: on PostgreSQL a whole second server on the same database (its own
        // pool, its own loop); PGlite is one process's database, so there a second generator
        // shares the server's connection.
        const other: TourGenerator["Type"] = (yield* isPglite)
          ? Context.get(
              yield* Layer.buildWithScope(
                Generation.layerGenerator({ clock, generator: { maxToursPerMaster: 5 } }),
                scope
              ).pipe(Effect.provide(yield* Effect.context<ServerServices>())),
              TourGenerator
            )
          : Context.get(
              yield* startServer(
                { _tag: "Postgres", url: Redacted.make(yield* sameDatabaseUrl) },
                { clock, generator: { maxToursPerMaster: 5 } },
                scope
              ),
              TourGenerator
            )
        const own = yield* TourGenerator
        for (let day = 1; day <= 20; day += 4) {
          yield* setNow(`2027-05-${String(day).padStart(2, "0")}T00:00:00Z`)
          for (let round = 0; round < 3; round++) {
            const [a, b] = yield* Effect.all([own.run, other.run], { concurrency: 2 })
            assert.strictEqual(a.failed + b.failed, 0)
          }
        }
        yield* Scope.close(scope, Exit.void)
        // Activated on May 1, last run on May 17 with 7 days ahead: May 1 to May 23.
        for (const id of ids) yield* assertExactlyOnce(id, daily("2027-05-01T00:00:00Z", 23))
      })
    )

    it.effect("a restart in the middle of a batch produces no duplicate and no gap", () =>
      Effect.gen(function* () {
        // A database that outlives the servers: a data directory, or a fresh PostgreSQL database.
        const pglite = yield* isPglite
        const database: DatabaseConfig = pglite
          ? {
              _tag: "Embedded",
              // A copy of the run's migrated database: opened without initdb.
              dataDir: join(yield* Testing.scopedDataDir("waybill-restart-"), "pglite")
            }
          : {
              _tag: "Postgres",
              url: Redacted.make(yield* Testing.freshPostgresDatabase(process.env.DATABASE_URL!))
            }
        const batches = { clock, generator: { maxToursPerMaster: 3 } }
        yield* setNow("2027-02-01T00:00:00Z")

        // First process: activation generates the first batch of 3 of the 14 due tours.
        const first = yield* Scope.make()
        const a = yield* startServer(database, batches, first)
        const id = yield* create(dailyMaster({ leadTimeDays: 14 })).pipe(Effect.provide(a))
        yield* act(id, "activate-recurring").pipe(Effect.provide(a))
        // 3, or 6 when the process's start-up run (forked, late on a slow machine) took the next.
        assert.include([3, 6], (yield* triggersOf(id).pipe(Effect.provide(a))).length)
        // Its next run dies in the middle of the batch: the tours are inserted and announced, then
        // the cursor update fails (a trigger stands in for the crash), so all of it rolls back.
        const sqlA = Context.get(a, SqlClient.SqlClient)
        yield* sqlA`
          CREATE FUNCTION waybill_test_crash() RETURNS trigger LANGUAGE plpgsql
          AS $$ BEGIN RAISE EXCEPTION 'process killed before the cursor moved'; END $$`
        yield* sqlA`
          CREATE TRIGGER waybill_test_crash BEFORE UPDATE OF generated_until ON drafts
          FOR EACH ROW EXECUTE FUNCTION waybill_test_crash()`
        // That start-up run may reach the master only now: wait for a run holding the row to
        // finish (what it committed before the trigger stands), and run again while one holds it,
        // until the run that crashes is ours.
        yield* sqlA`SELECT 1 FROM drafts WHERE workspace_id = ${workspaceA} AND id = ${id} FOR UPDATE`
        const before = (yield* triggersOf(id).pipe(Effect.provide(a))).length
        const crashed = yield* Context.get(a, TourGenerator)
          .runMaster({ workspaceId: workspaceA, id })
          .pipe(
            Effect.tap((outcome) => (outcome.status === "skipped" ? aMoment : Effect.void)),
            Effect.repeat({ until: (outcome) => outcome.status !== "skipped" })
          )
        assert.strictEqual(crashed.status, "failed")
        assert.strictEqual(crashed.created.length, 0)
        assert.strictEqual((yield* triggersOf(id).pipe(Effect.provide(a))).length, before)
        yield* sqlA`DROP TRIGGER waybill_test_crash ON drafts`
        // And the process goes away with a run in flight.
        const running = yield* Effect.fork(Context.get(a, TourGenerator).run)
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(running)
        yield* Scope.close(first, Exit.void)

        // Second process on the same data: it continues from the cursor, batch by batch.
        const second = yield* Scope.make()
        const b = yield* startServer(database, batches, second)
        const generator = Context.get(b, TourGenerator)
        // Batch by batch until a run creates nothing. A run that finds the master locked skips
        // it (its own start-up run, or the first process's transaction still being rolled back
        // as its connections close): wait a moment and run again.
        for (let run = 0; run < 30; run++) {
          const summary = yield* generator.run
          if (summary.skipped > 0) yield* aMoment
          else if (summary.toursCreated === 0) break
        }
        yield* assertExactlyOnce(id, daily("2027-02-01T00:00:00Z", 14)).pipe(Effect.provide(b))
        yield* Scope.close(second, Exit.void)
      }).pipe(Effect.scoped)
    )
  },
  // The clock goes back and forth by months here: a removal run at a later instant would remove
  // what a test then writes at an earlier one, so nothing is removed.
  { generatorIntervalMs: 3_600_000, retentionMs: 0 },
  { clock }
)
