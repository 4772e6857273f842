/**
 * Group commit for events published one at a time by concurrent callers (`POST /events`): while
 * one write is in flight, the events that arrive queue up, and the next write records them all,
 * one statement per workspace. An event that arrives when nothing is being written is written at
 * once, so a quiet server adds no delay; a busy one writes far fewer, larger statements (and
 * raises one notification per write, not one per event).
 *
 * Each caller gets its own event back, or its own failure: a write that fails for a group of
 * several events is tried again one event at a time, unless the database is out (then every
 * caller of the group gets the outage), so one event no adapter accepts fails alone.
 */
import * as Availability from "@waybill/core/Availability"
import type { WorkspaceId } from "@waybill/core/Workspace"
import type { EventOutbox, NewEvent, RecordedEvent } from "@waybill/events/EventOutbox"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Signal from "./signal.js"

/** Records one event, sharing the write with whatever else is waiting. */
export type Record = (workspaceId: WorkspaceId, event: NewEvent) => Effect.Effect<RecordedEvent>

interface Waiting {
  readonly workspaceId: WorkspaceId
  readonly event: NewEvent
  readonly resume: (result: Effect.Effect<RecordedEvent>) => void
  cancelled: boolean
}

/** Events per write at most. */
export const maxBatch = 256

/** Starts the writer in the scope; `record` queues an event and waits for its write. */
export const make = (outbox: EventOutbox["Type"]): Effect.Effect<Record, never, Scope.Scope> =>
  Effect.gen(function* () {
    const availability = yield* Effect.serviceOption(Availability.Availability)
    const isOutage = (cause: Cause.Cause<unknown>) =>
      Option.isSome(availability) && availability.value.isOutage(Cause.squash(cause))
    let queue: Array<Waiting> = []
    const arrived = Signal.make()

    const settle = (items: ReadonlyArray<Waiting>, exit: Exit.Exit<ReadonlyArray<RecordedEvent>>) => {
      items.forEach((item, index) => {
        item.resume(Exit.isSuccess(exit) ? Effect.succeed(exit.value[index]!) : Effect.failCause(exit.cause))
      })
    }

    const writeGroup = (workspaceId: WorkspaceId, items: ReadonlyArray<Waiting>): Effect.Effect<void> =>
      Effect.flatMap(
        Effect.exit(
          outbox.publish(
            workspaceId,
            items.map((item) => item.event)
          )
        ),
        (exit) => {
          if (Exit.isSuccess(exit) || items.length === 1 || isOutage(exit.cause)) {
            return Effect.sync(() => settle(items, exit))
          }
          return Effect.forEach(items, (item) => writeGroup(workspaceId, [item]), {
            concurrency: "unbounded",
            discard: true
          })
        }
      )

    const writer = Effect.forever(
      Effect.gen(function* () {
        if (queue.length === 0) yield* arrived.wait
        const taken = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch)
        queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch)
        const groups = new Map<WorkspaceId, Array<Waiting>>()
        for (const item of taken) {
          if (item.cancelled) continue
          const group = groups.get(item.workspaceId)
          if (group === undefined) groups.set(item.workspaceId, [item])
          else group.push(item)
        }
        yield* Effect.forEach(
          groups,
          ([workspaceId, items]) =>
            // At a stop, the callers of a write cut short hear so instead of waiting for ever.
            Effect.onInterrupt(writeGroup(workspaceId, items), () =>
              Effect.sync(() => {
                for (const item of items) item.resume(Effect.interrupt)
              })
            ),
          { concurrency: "unbounded", discard: true }
        )
      })
    )
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const item of queue) item.resume(Effect.interrupt)
        queue = []
      })
    )
    yield* Effect.forkScoped(writer)

    return (workspaceId, event) =>
      Effect.async<RecordedEvent>((resume) => {
        const item: Waiting = { workspaceId, event, resume, cancelled: false }
        queue.push(item)
        arrived.notify()
        // A caller that gives up before its write starts leaves nothing; once started, the
        // write commits or not as one, like a single statement the caller walked away from.
        return Effect.sync(() => {
          item.cancelled = true
        })
      })
  })
