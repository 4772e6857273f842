/**
 * A time range made for an event inside a transaction that then rolls back: the range goes with
 * it, and a later event of that time still finds (or makes) its range, on PGlite and PostgreSQL;
 * on PostgreSQL, an event written beside the transaction that is making its range waits for it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import { WorkspaceId } from "@waybill/core/Workspace"
import { EventOutbox } from "@waybill/events/EventOutbox"
import { Deferred, Effect, Fiber, Layer, Schema, TestClock } from "effect"
import * as PgEventOutbox from "../src/PgEventOutbox.js"
import * as Testing from "../src/Testing.js"
import { forEachBackend } from "./harness.js"

const ws = Schema.decodeSync(WorkspaceId)("ranges")
const tourCreated = (id: string) => ({
  type: "tour-created" as const,
  payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
})

forEachBackend(
  "Event time ranges",
  (database) => Layer.provideMerge(PgEventOutbox.layer, database),
  (it) => {
    it.effect("a range made in a transaction that rolls back is made again for the next event of its time", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const outbox = yield* EventOutbox
        // Years past any range the migrations or other tests made.
        yield* TestClock.setTime(Date.UTC(2031, 0, 1))
        const failed = yield* Effect.flip(
          sql.withTransaction(
            Effect.zipRight(outbox.publish(ws, [tourCreated("tour_rolled_back")]), Effect.fail("abort"))
          )
        )
        assert.strictEqual(failed, "abort")
        const [published] = yield* outbox.publish(ws, [tourCreated("tour_kept")])
        const rows = yield* sql<{ id: string }>`SELECT id FROM events WHERE workspace_id = ${ws}`
        assert.deepStrictEqual(
          rows.map((row) => row.id),
          [published!.id]
        )
      })
    )
  }
)

// PGlite runs one transaction at a time: nothing writes beside an open one there.
for (const backend of Testing.backends().filter((candidate) => candidate.name === "postgres")) {
  layer(Layer.provideMerge(PgEventOutbox.layer, Testing.layer(backend)), { timeout: "120 seconds" })(
    `Event time ranges beside an open transaction [${backend.name}]`,
    (it) => {
      it.effect(
        "an event written while another transaction holds its new range uncommitted waits for it, then lands",
        () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const outbox = yield* EventOutbox
            yield* TestClock.setTime(Date.UTC(2032, 0, 1))
            const holding = yield* Deferred.make<void>()
            const release = yield* Deferred.make<void>()
            const first = yield* Effect.fork(
              sql.withTransaction(
                Effect.zipLeft(
                  outbox.publish(ws, [tourCreated("tour_first")]),
                  Effect.zipRight(Deferred.succeed(holding, undefined), Deferred.await(release))
                )
              )
            )
            yield* Deferred.await(holding)
            const second = yield* Effect.fork(outbox.publish(ws, [tourCreated("tour_second")]))
            // Real time, not the test clock's: long enough for the second write to reach the database.
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
            yield* Deferred.succeed(release, undefined)
            const [a] = yield* Fiber.join(first)
            const [b] = yield* Fiber.join(second)
            const rows = yield* sql<{ id: string }>`
          SELECT id FROM events WHERE id IN (${a!.id}, ${b!.id}) ORDER BY id`
            assert.deepStrictEqual(
              rows.map((row) => row.id),
              [a!.id, b!.id].sort()
            )
          })
      )
    }
  )
}
