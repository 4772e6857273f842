/**
 * An event's ordering key (contract §8, "Ordering by key") on PGlite and PostgreSQL: stored in
 * `events.ordering_key` by both outbox statements, `null` without one, and never in the body.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventIntake from "@waybill/events/EventIntake"
import { EventOutbox } from "@waybill/events/EventOutbox"
import { Effect, Layer, Schema } from "effect"
import * as PgEventOutbox from "../src/PgEventOutbox.js"
import { forEachBackend } from "./harness.js"

const ws = Schema.decodeSync(WorkspaceId)("keys-a")

const rowOf = (id: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ ordering_key: string | null; body: string }>`SELECT ordering_key, body FROM events WHERE id = ${id}`
  ).pipe(Effect.map(([row]) => row!))

forEachBackend(
  "Ordering keys in the outbox",
  (database) => PgEventOutbox.layer.pipe(Layer.provideMerge(database)),
  (it) => {
    it.effect("POST /events' orderingKey is stored beside the body, null without one", () =>
      Effect.gen(function* () {
        const publish = (body: unknown) =>
          EventIntake.publish(body).pipe(Effect.provideService(CurrentWorkspace, { id: ws, apiKeyId: "k" }))
        const keyed = yield* publish({ type: "tour-deleted", payload: { tourId: "t1" }, orderingKey: "tour_1 🚚" })
        const plain = yield* publish({ type: "tour-deleted", payload: { tourId: "t2" } })
        const stored = yield* rowOf(keyed.id)
        assert.strictEqual(stored.ordering_key, "tour_1 🚚")
        assert.strictEqual(stored.body, keyed.body)
        assert.notInclude(stored.body, "orderingKey")
        assert.isNull((yield* rowOf(plain.id)).ordering_key)
      })
    )

    it.effect("the idempotent write stores it too", () =>
      Effect.gen(function* () {
        const outbox = yield* EventOutbox
        const [keyed, plain] = yield* outbox.publishIdempotent!(ws, [
          { event: { type: "tour-deleted", payload: { tourId: "t3" }, orderingKey: "k".repeat(255) } },
          { event: { type: "tour-deleted", payload: { tourId: "t4" } } }
        ])
        assert.strictEqual((yield* rowOf(keyed!.id)).ordering_key, "k".repeat(255))
        assert.isNull((yield* rowOf(plain!.id)).ordering_key)
      })
    )
  }
)
