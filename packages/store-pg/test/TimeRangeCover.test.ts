/**
 * A time range made for an event inside a transaction that then rolls back: the range goes with
 * it, and a later event of that time still finds (or makes) its range, on PGlite and PostgreSQL.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import { WorkspaceId } from "@waybill/core/Workspace"
import { EventOutbox } from "@waybill/events/EventOutbox"
import { Effect, Layer, Schema, TestClock } from "effect"
import * as PgEventOutbox from "../src/PgEventOutbox.js"
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
