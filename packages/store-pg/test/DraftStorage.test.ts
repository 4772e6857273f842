import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import { Transactor } from "@waybill/core/Transactor"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as CreateDraft from "@waybill/drafts/CreateDraft"
import { apiKeyActor } from "@waybill/drafts/Draft"
import { DraftRepository as DraftRepositoryTag } from "@waybill/drafts/DraftRepository"
import { DraftService, layer as DraftServiceLayer } from "@waybill/drafts/DraftService"
import * as ProductEvaluator from "@waybill/drafts/ProductEvaluator"
import * as ReferenceData from "@waybill/drafts/ReferenceData"
import { Effect, Either, Exit, Layer, Schema, TestClock } from "effect"
import * as DraftRepository from "../src/PgDraftRepository.js"
import * as EventOutbox from "../src/PgEventOutbox.js"
import { forEachBackend } from "./harness.js"

const NOW = 1_798_000_000_000
const wsA = Schema.decodeSync(WorkspaceId)("ws-a")
const wsB = Schema.decodeSync(WorkspaceId)("ws-b")

const referenceData: ReferenceData.ReferenceDataSet = {
  transportShapes: [
    { id: "shape_line", name: "Line", outputs: ["tour"], recurring: { enabled: true }, requiredFields: [] },
    { id: "shape_order", name: "Order", outputs: ["order"], recurring: { enabled: false }, requiredFields: [] }
  ],
  vehicleClasses: [{ id: "vc_12t", name: "12 t", maxWeightKg: 5000, rank: 1 }],
  products: [{ id: "prod_ftl", name: "FTL" }]
}

const master = () =>
  Schema.decodeUnknownSync(CreateDraft.CreateDraft)({
    origin: "manual",
    status: "draft",
    name: "Line {{ weekday }}",
    transportShapeId: "shape_line",
    transport: {
      multiStopData: {
        stops: [
          { address: { city: "Hamburg" }, timeWindow: { from: "06:00", to: "08:00" } },
          { address: { city: "München" }, timeWindow: { from: "12:00", to: "14:00" }, dayOffset: 1 }
        ]
      },
      tour: { vehicleClass: "vc_12t" },
      keptInOrder: { z: 1, a: 2 }
    },
    recurringSchedule: {
      cronExpressions: ["0 6 * * 1-5"],
      timezone: "Europe/Berlin",
      leadTimeDays: 7,
      startsAt: 1_798_761_600,
      endsAt: 1_830_297_600
    }
  })

const oneOff = () =>
  Schema.decodeUnknownSync(CreateDraft.CreateDraft)({
    origin: "manual",
    status: "draft",
    transportShapeId: "shape_order"
  })

const named = (name: string) => ({ ...master(), name })

// Runs `effect` while the outbox refuses every event whose body holds "Refused" (a draft of that
// name), as a database constraint would; the refusal is lifted afterwards, whatever happened.
const whileOutboxRefuses = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.acquireUseRelease(
      Effect.zipRight(
        sql`
          CREATE FUNCTION waybill_test_refuse() RETURNS trigger LANGUAGE plpgsql
          AS $$ BEGIN IF NEW.body LIKE '%Refused%' THEN RAISE EXCEPTION 'outbox refused'; END IF; RETURN NEW; END $$`,
        sql`CREATE TRIGGER waybill_test_refuse BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION waybill_test_refuse()`
      ),
      () => effect,
      () =>
        Effect.orDie(
          Effect.zipRight(sql`DROP TRIGGER waybill_test_refuse ON events`, sql`DROP FUNCTION waybill_test_refuse()`)
        )
    )
  )

const as = (workspaceId: WorkspaceId) => Effect.provideService(CurrentWorkspace, { id: workspaceId, apiKeyId: "env-1" })

const events = (draftId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ type: string; body: string; workspace_id: string }>`
      SELECT type, body, workspace_id FROM events WHERE body LIKE ${`%${draftId}%`} ORDER BY seq`
  )

forEachBackend(
  "Drafts storage",
  (database) =>
    DraftServiceLayer.pipe(
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
    it.effect("creates, reads, lists, deletes, with the events in the outbox", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const drafts = yield* DraftService
        const created = yield* drafts.create(master()).pipe(as(wsA))
        assert.isTrue(created.id.startsWith("drf_"))
        const read = yield* drafts.get(created.id).pipe(as(wsA))
        assert.deepStrictEqual(read, created)
        assert.deepStrictEqual(Object.keys((read.transport as { keptInOrder: object }).keptInOrder), ["z", "a"])
        const stored = yield* events(created.id)
        assert.deepStrictEqual(
          stored.map((row) => row.type),
          ["transport-drafts-created"]
        )
        const body = JSON.parse(stored[0]!.body)
        assert.deepStrictEqual(Object.keys(body), ["id", "type", "createdAt", "payload"])
        assert.strictEqual(body.payload.transportDrafts[0].id, created.id)
        assert.strictEqual(stored[0]!.workspace_id, "ws-a")

        yield* drafts.delete(created.id).pipe(as(wsA))
        assert.isTrue(Exit.isFailure(yield* Effect.exit(drafts.get(created.id).pipe(as(wsA)))))
        assert.deepStrictEqual(
          (yield* events(created.id)).map((row) => row.type),
          ["transport-drafts-created", "transport-drafts-deleted"]
        )
      })
    )

    it.effect("a draft and its event are written together or not at all", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const sql = yield* SqlClient.SqlClient
        const drafts = yield* DraftService
        const before = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM drafts`)[0]!.n
        // The outbox refuses the event: the draft written with it must not stay.
        const refused = yield* whileOutboxRefuses(Effect.exit(drafts.create(named("Refused")).pipe(as(wsA))))
        assert.isTrue(Exit.isFailure(refused))
        assert.strictEqual((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM drafts`)[0]!.n, before)
        // And with the outbox accepting again, both are written.
        const created = yield* drafts.create(master()).pipe(as(wsA))
        assert.strictEqual((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM drafts`)[0]!.n, before + 1)
        assert.deepStrictEqual(
          (yield* events(created.id)).map((row) => row.type),
          ["transport-drafts-created"]
        )
      })
    )

    it.effect("drafts created at once share statements; one the outbox refuses fails alone", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const sql = yield* SqlClient.SqlClient
        const drafts = yield* DraftService
        // Rows one statement wrote share its transaction id.
        const transactions = (ids: ReadonlyArray<string>) =>
          Effect.map(
            sql<{ n: number }>`SELECT count(DISTINCT xmin::text)::int AS n FROM drafts WHERE id IN ${sql.in(ids)}`,
            (rows) => rows[0]!.n
          )
        const together = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, i) => named(`Together ${i}`)),
          (request) => drafts.create(request).pipe(as(wsA)),
          { concurrency: "unbounded" }
        )
        assert.isBelow(yield* transactions(together.map((draft) => draft.id)), 8)

        const exits = yield* whileOutboxRefuses(
          Effect.forEach(
            ["Kept 1", "Kept 2", "Refused", "Kept 3", "Kept 4"],
            (name) => Effect.exit(drafts.create(named(name)).pipe(as(wsA))),
            { concurrency: "unbounded" }
          )
        )
        assert.deepStrictEqual(
          exits.map((exit) => (Exit.isSuccess(exit) ? "created" : "failed")),
          ["created", "created", "failed", "created", "created"]
        )
        const stored = yield* sql<{ name: string }>`
          SELECT document->>'name' AS name FROM drafts WHERE document->>'name' LIKE 'Kept%' OR document->>'name' = 'Refused'`
        assert.sameMembers(
          stored.map((row) => row.name),
          ["Kept 1", "Kept 2", "Kept 3", "Kept 4"]
        )
        for (const exit of exits) {
          if (Exit.isSuccess(exit)) {
            assert.deepStrictEqual(
              (yield* events(exit.value.id)).map((row) => row.type),
              ["transport-drafts-created"]
            )
          }
        }
      })
    )

    it.effect("inside a transaction a new draft is written on its connection, and rolls back with it", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const sql = yield* SqlClient.SqlClient
        const repository = yield* DraftRepositoryTag
        const transactor = yield* Transactor
        const draft = yield* (yield* DraftService).create(master()).pipe(as(wsA))
        const copy = { ...draft, id: `${draft.id}_copy` }
        const rolledBack = yield* Effect.exit(
          transactor.withTransaction(
            Effect.zipRight(
              repository.insertPublishing!(wsA, copy, [
                { type: "transport-drafts-created", payload: { transportDrafts: [copy] } }
              ]),
              Effect.die(new Error("the transaction fails after the write"))
            )
          )
        )
        assert.isTrue(Exit.isFailure(rolledBack))
        assert.deepStrictEqual(yield* sql`SELECT id FROM drafts WHERE id = ${copy.id}`, [])
        assert.deepStrictEqual(yield* events(copy.id), [])
      })
    )

    it.effect("keeps workspaces apart", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const drafts = yield* DraftService
        const created = yield* drafts.create(oneOff()).pipe(as(wsA))
        const foreign = yield* Effect.either(drafts.get(created.id).pipe(as(wsB)))
        assert.isTrue(Either.isLeft(foreign) && foreign.left._tag === "DraftNotFound")
        const listB = yield* drafts.list({}).pipe(as(wsB))
        assert.isFalse(listB.data.some((draft) => draft.id === created.id))
        const deleteB = yield* Effect.either(drafts.delete(created.id).pipe(as(wsB)))
        assert.isTrue(Either.isLeft(deleteB))
        assert.deepStrictEqual((yield* drafts.get(created.id).pipe(as(wsA))).id, created.id)
      })
    )

    it.effect("pages newest first with a status filter", () =>
      Effect.gen(function* () {
        const drafts = yield* DraftService
        const workspace = Schema.decodeSync(WorkspaceId)("ws-paging")
        const ids: Array<string> = []
        for (let i = 0; i < 5; i++) {
          yield* TestClock.setTime(NOW + i * 1000)
          ids.push((yield* drafts.create(i % 2 === 0 ? oneOff() : master()).pipe(as(workspace))).id)
        }
        const first = yield* drafts.list({ limit: 2 }).pipe(as(workspace))
        assert.deepStrictEqual(
          first.data.map((d) => d.id),
          [ids[4], ids[3]]
        )
        assert.isNotNull(first.nextCursor)
        const second = yield* drafts.list({ limit: 2, cursor: first.nextCursor! }).pipe(as(workspace))
        assert.deepStrictEqual(
          second.data.map((d) => d.id),
          [ids[2], ids[1]]
        )
        const last = yield* drafts.list({ limit: 2, cursor: second.nextCursor! }).pipe(as(workspace))
        assert.deepStrictEqual(
          last.data.map((d) => d.id),
          [ids[0]]
        )
        assert.isNull(last.nextCursor)
        const masters = yield* drafts.list({ status: "draft", limit: 100 }).pipe(as(workspace))
        assert.strictEqual(masters.data.length, 5)
      })
    )

    it.effect("two simultaneous activations: one succeeds, one is refused, one set of events", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const drafts = yield* DraftService
        const created = yield* drafts.create(master()).pipe(as(wsA))
        const results = yield* Effect.all(
          [1, 2].map(() =>
            Effect.either(drafts.act(created.id, { type: "activate-recurring" }, apiKeyActor("env-1")).pipe(as(wsA)))
          ),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Either.isRight).length, 1)
        const refused = results.find(Either.isLeft)
        assert.strictEqual(refused?._tag === "Left" ? refused.left._tag : undefined, "InvalidTransition")
        const types = (yield* events(created.id)).map((row) => row.type)
        assert.deepStrictEqual(types.filter((type) => type === "transport-draft-recurring-activated").length, 1)
        assert.deepStrictEqual(types.filter((type) => type === "transport-draft-action-created").length, 1)
        assert.strictEqual((yield* drafts.get(created.id).pipe(as(wsA))).status, "active-recurring")
        const running = yield* Effect.either(drafts.delete(created.id).pipe(as(wsA)))
        assert.isTrue(Either.isLeft(running) && running.left._tag === "DraftConflict")
      })
    )
  }
)
