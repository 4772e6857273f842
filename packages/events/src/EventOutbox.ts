/**
 * The outbox port: producers record events here in the same transaction as the state change
 * that raised them (run them inside `Transactor.withTransaction`); the webhook dispatcher drains
 * the store behind it. Recording fixes the delivery body bytes once (contract §5).
 *
 * @since 0.1.0
 */
import * as Id from "@waybill/core/Id"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type { EventType } from "./EventType.js"

/**
 * An event a producer wants to publish.
 *
 * @since 0.1.0
 * @category models
 */
export interface NewEvent {
  readonly type: EventType
  readonly payload: unknown
}

/**
 * An event as recorded: id, time, and the exact body every delivery of it sends.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedEvent {
  readonly id: string
  readonly workspaceId: WorkspaceId
  readonly type: string
  readonly createdAt: number
  readonly payload: unknown
  /** `JSON.stringify({ id, type, createdAt, payload })`: the delivery envelope, fixed once. */
  readonly body: string
}

/**
 * @since 0.1.0
 * @category tags
 */
export class EventOutbox extends Context.Tag("@waybill/events/EventOutbox")<
  EventOutbox,
  {
    /**
     * Records events, all or none (an adapter writes them atomically, in the caller's
     * transaction when there is one, so they commit or roll back with the change that raised
     * them).
     */
    readonly publish: (
      workspaceId: WorkspaceId,
      events: ReadonlyArray<NewEvent>
    ) => Effect.Effect<ReadonlyArray<RecordedEvent>>
  }
>() {}

/**
 * Gives events their ids and time (one `Clock` reading for the batch) and fixes their bodies.
 * Adapters call this, so every store records the same envelope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const recordAll = (
  workspaceId: WorkspaceId,
  events: ReadonlyArray<NewEvent>
): Effect.Effect<ReadonlyArray<RecordedEvent>> =>
  Effect.map(Clock.currentTimeMillis, (now) => {
    const createdAt = Math.floor(now / 1000)
    return events.map((event) => {
      const id = Id.makeAt("evt", now)
      const body = JSON.stringify({ id, type: event.type, createdAt, payload: event.payload })
      return { id, workspaceId, type: event.type, createdAt, payload: event.payload, body }
    })
  })

/**
 * Reads what an in-memory outbox recorded, for tests and embedders without storage.
 *
 * @since 0.1.0
 * @category tags
 */
export class MemoryEventLog extends Context.Tag("@waybill/events/MemoryEventLog")<
  MemoryEventLog,
  { readonly all: Effect.Effect<ReadonlyArray<RecordedEvent>> }
>() {}

/**
 * An in-memory outbox that keeps every recorded event in order.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<EventOutbox | MemoryEventLog> = Layer.effectContext(
  Effect.gen(function* () {
    const log = yield* Ref.make<ReadonlyArray<RecordedEvent>>([])
    const outbox = EventOutbox.of({
      publish: (workspaceId, events) =>
        recordAll(workspaceId, events).pipe(Effect.tap((recorded) => Ref.update(log, (all) => [...all, ...recorded])))
    })
    return Context.make(EventOutbox, outbox).pipe(Context.add(MemoryEventLog, { all: Ref.get(log) }))
  })
)
