import { assert, describe, it } from "@effect/vitest"
import * as Availability from "@waybill/core/Availability"
import type { ValidationError } from "@waybill/core/ValidationError"
import { CurrentWorkspace, type WorkspaceId } from "@waybill/core/Workspace"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as EventIntake from "../src/EventIntake.js"
import { EventOutbox, type NewEvent, type RecordedEvent, recordAll } from "../src/EventOutbox.js"

const tour = (properties: Record<string, unknown> = {}) => ({
  id: "tour_1",
  status: "planned",
  substatus: null,
  properties
})

const ws = (id: string) => id as WorkspaceId
const body = (id: string) => ({ type: "tour-created", payload: { tour: { ...tour(), id } } })

interface Write {
  readonly workspaceId: string
  readonly tourIds: ReadonlyArray<string>
}

// An outbox that records each write, holds every write until `release` while `hold` is set,
// and dies for a write that holds the tour `tour_bad`.
const scripted = Effect.gen(function* () {
  const writes = yield* Ref.make<ReadonlyArray<Write>>([])
  const gate = yield* Deferred.make<void>()
  const hold = yield* Ref.make(true)
  const outbox = EventOutbox.of({
    publish: (workspaceId, events: ReadonlyArray<NewEvent>) =>
      Effect.gen(function* () {
        const tourIds = events.map((event) => (event.payload as { tour: { id: string } }).tour.id)
        yield* Ref.update(writes, (all) => [...all, { workspaceId, tourIds }])
        if (yield* Ref.get(hold)) yield* Deferred.await(gate)
        if (tourIds.includes("tour_bad")) return yield* Effect.die(new Error("refused"))
        return yield* recordAll(workspaceId, events)
      })
  })
  const release = Effect.zipRight(Ref.set(hold, false), Deferred.succeed(gate, undefined))
  return { outbox, writes: Ref.get(writes), release }
})

const publishIn = (workspaceId: string, tourId: string) =>
  EventIntake.publish(body(tourId)).pipe(
    Effect.provideService(CurrentWorkspace, { id: ws(workspaceId), apiKeyId: "key_test" })
  )

// The group commit over `outbox` (built in the current scope), and `run`, which publishes a
// tour's event in a fiber of its own.
const groupCommitOver = (outbox: EventOutbox["Type"], layers: Layer.Layer<never> = Layer.empty) =>
  Effect.map(
    Layer.build(
      EventIntake.layerGroupCommit.pipe(Layer.provideMerge(Layer.succeed(EventOutbox, outbox)), Layer.provide(layers))
    ),
    (context) => (workspaceId: string, tourId: string) =>
      Effect.fork(Effect.provide(publishIn(workspaceId, tourId), context))
  )

// Publishes the first event, and returns once its write holds the writer (the others wait).
const holdWriter = (
  run: (workspaceId: string, tourId: string) => Effect.Effect<Fiber.RuntimeFiber<RecordedEvent, ValidationError>>,
  writes: Effect.Effect<ReadonlyArray<Write>>
) => Effect.zipLeft(run("ws_a", "tour_0"), Effect.repeat(writes, { until: (all) => all.length === 1 }))

describe("EventIntake group commit", () => {
  it.scoped("events published while a write is in flight share the next write, each caller getting its own", () =>
    Effect.gen(function* () {
      const { outbox, writes, release } = yield* scripted
      const run = yield* groupCommitOver(outbox)
      // The first is written at once; it holds the writer while the rest arrive.
      const first = yield* holdWriter(run, writes)
      const rest = yield* Effect.forEach(["tour_1", "tour_2", "tour_3"], (id) => run("ws_a", id))
      const other = yield* run("ws_b", "tour_9")
      yield* Effect.yieldNow()
      yield* release
      const recorded = yield* Effect.forEach([first, ...rest, other], Fiber.join)
      assert.deepStrictEqual(
        recorded.map((event) => [event.workspaceId, (event.payload as { tour: { id: string } }).tour.id]),
        [
          ["ws_a", "tour_0"],
          ["ws_a", "tour_1"],
          ["ws_a", "tour_2"],
          ["ws_a", "tour_3"],
          ["ws_b", "tour_9"]
        ]
      )
      // One write for the first, then one per workspace for the four that waited.
      assert.deepStrictEqual(yield* writes, [
        { workspaceId: "ws_a", tourIds: ["tour_0"] },
        { workspaceId: "ws_a", tourIds: ["tour_1", "tour_2", "tour_3"] },
        { workspaceId: "ws_b", tourIds: ["tour_9"] }
      ])
    })
  )

  it.scoped("a write that fails for a group is tried one event at a time: only the event refused fails", () =>
    Effect.gen(function* () {
      const { outbox, writes, release } = yield* scripted
      const run = yield* groupCommitOver(outbox)
      const first = yield* holdWriter(run, writes)
      const group = yield* Effect.forEach(["tour_1", "tour_bad", "tour_2"], (id) => run("ws_a", id))
      yield* Effect.yieldNow()
      yield* release
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(first)))
      const exits = yield* Effect.forEach(group, Fiber.await)
      assert.deepStrictEqual(
        exits.map((exit) => (Exit.isSuccess(exit) ? "recorded" : "failed")),
        ["recorded", "failed", "recorded"]
      )
      const tried = (yield* writes).slice(2).map((write) => write.tourIds)
      assert.sameDeepMembers(tried, [["tour_1"], ["tour_bad"], ["tour_2"]])
    })
  )

  it.scoped("when the database is out, every caller of the group gets the outage and nothing is tried again", () =>
    Effect.gen(function* () {
      const { outbox, writes, release } = yield* scripted
      const failing = EventOutbox.of({
        publish: (workspaceId, events) =>
          Effect.zipRight(outbox.publish(workspaceId, events), Effect.die(new Error("connection refused")))
      })
      const run = yield* groupCommitOver(
        failing,
        Layer.succeed(Availability.Availability, { check: Effect.succeed(false), isOutage: () => true })
      )
      const first = yield* holdWriter(run, writes)
      const group = yield* Effect.forEach(["tour_1", "tour_2"], (id) => run("ws_a", id))
      yield* Effect.yieldNow()
      yield* release
      yield* Fiber.await(first)
      const exits = yield* Effect.forEach(group, Fiber.await)
      assert.isTrue(exits.every(Exit.isFailure))
      assert.strictEqual((yield* writes).length, 2, "the group's one write, not one per event")
    })
  )

  it.scoped("a caller that gives up before its write starts leaves nothing written", () =>
    Effect.gen(function* () {
      const { outbox, writes, release } = yield* scripted
      const run = yield* groupCommitOver(outbox)
      const first = yield* holdWriter(run, writes)
      const gone = yield* run("ws_a", "tour_gone")
      const kept = yield* run("ws_a", "tour_kept")
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(gone)
      yield* release
      yield* Fiber.join(first)
      yield* Fiber.join(kept)
      assert.deepStrictEqual(
        (yield* writes).map((write) => write.tourIds),
        [["tour_0"], ["tour_kept"]]
      )
    })
  )

  it.scoped("at a stop, callers still waiting are interrupted rather than left waiting", () =>
    Effect.gen(function* () {
      const { outbox, writes } = yield* scripted
      const closing = yield* Effect.gen(function* () {
        const run = yield* groupCommitOver(outbox)
        const first = yield* holdWriter(run, writes)
        const waiting = yield* run("ws_a", "tour_1")
        yield* Effect.yieldNow()
        return [first, waiting] as const
      }).pipe(Effect.scoped)
      const exits = yield* Effect.forEach(closing, Fiber.await)
      assert.isTrue(exits.every(Exit.isInterrupted))
    })
  )
})
