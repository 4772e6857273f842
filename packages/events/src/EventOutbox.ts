/**
 * The outbox port: producers record events in the transaction of the state change that raised
 * them, fixing the delivery body bytes once (contract §5); the dispatcher drains it. Payload
 * depth: docs/internals.md (EventOutbox).
 * @since 0.1.0
 */

import * as Id from "@waybill/core/Id"
import type { IdempotencyRecord } from "@waybill/core/Idempotency"
import * as JsonDepth from "@waybill/core/JsonDepth"
import * as Metrics from "@waybill/core/Metrics"
import type { Recorded } from "@waybill/core/Recorded"
import * as TraceContext from "@waybill/core/TraceContext"
import * as ValidationError from "@waybill/core/ValidationError"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { EventType } from "./EventType.js"

/**
 * The deepest payload, in levels of objects and arrays: twice the contract's input limit
 * (`JsonDepth.maxDepth`), because events embed request bodies a few levels down, yet far from
 * any stack limit of the recursive code that reads them (schema decoders, `JSON.stringify`).
 * @since 0.1.0
 */
export const maxPayloadDepth = 2 * JsonDepth.maxDepth

/** An event a producer wants to publish. @since 0.1.0 */
export interface NewEvent {
  readonly type: EventType
  readonly payload: unknown
  /**
   * The payload already as JSON text, exactly `JSON.stringify(payload)`, when the producer has
   * it (a new draft's document, written once for storage, the answer and its event): the body
   * is then built around it instead of serializing the payload again.
   */
  readonly payloadJson?: string | undefined
  /**
   * The event's id when the producer must know it before the event is recorded (an idempotent
   * `POST /events` keeps its answer, `{ "id": … }`, in the same write); made by `recordAll`
   * otherwise. An `evt_` id (`Id.make("evt")`).
   */
  readonly id?: string | undefined
  /**
   * The W3C `traceparent` of the request that raised the event, when the producer captured it
   * before handing the event to another fiber (a group commit); else `recordAll` takes the
   * recording fiber's (`TraceContext.current`).
   */
  readonly traceparent?: string | undefined
  /**
   * The ordering key (contract §8, 1–255 characters): deliveries of events with the same key to
   * a webhook with `"ordering": "key"` are made one at a time in event order. Not in the body.
   */
  readonly orderingKey?: string | undefined
}

/** An event as recorded: id, time, and the exact body every delivery of it sends. @since 0.1.0 */
export interface RecordedEvent {
  readonly id: string
  readonly workspaceId: WorkspaceId
  readonly type: string
  readonly createdAt: number
  readonly payload: unknown
  /** `JSON.stringify({ id, type, createdAt, payload })`: the delivery envelope, fixed once. */
  readonly body: string
  /** The trace the event belongs to (contract §8 "Tracing"), stored with it for every attempt. */
  readonly traceparent: string
  /** The event's ordering key, or `null` without one. */
  readonly orderingKey: string | null
}

/** @since 0.1.0 */
export class EventOutbox extends Context.Tag("@waybill/events/EventOutbox")<
  EventOutbox,
  {
    /**
     * Records events, all or none (an adapter writes them atomically, in the caller's
     * transaction when there is one, so they commit or roll back with the change that raised
     * them). A payload nested deeper than `maxPayloadDepth` is a defect (see `recordAll`).
     */
    readonly publish: (
      workspaceId: WorkspaceId,
      events: ReadonlyArray<NewEvent>
    ) => Effect.Effect<ReadonlyArray<RecordedEvent>>
    /**
     * Optional: records events like `publish`, an entry's event with the idempotency record of
     * the request that raised it (contract §8) in the same atomic write. An entry whose record's
     * key is kept already is not recorded: `undefined` in its place (a write holding the key,
     * uncommitted, is waited for). Entries without a record are recorded as by `publish`.
     */
    readonly publishIdempotent?:
      | ((
          workspaceId: WorkspaceId,
          entries: ReadonlyArray<{ readonly event: NewEvent; readonly record?: IdempotencyRecord | undefined }>
        ) => Effect.Effect<ReadonlyArray<RecordedEvent | undefined>>)
      | undefined
  }
>() {}

/**
 * Gives events their ids and time (one `Clock` reading for the batch) and fixes their bodies.
 * Adapters call this, so every store records the same envelope.
 *
 * A payload nested deeper than `maxPayloadDepth` is a defect of its producer (every input it
 * can come from is bounded at 64 levels first): the batch dies with a `ValidationError` naming
 * the path, before `JSON.stringify` could exhaust the stack, and nothing is recorded.
 * @since 0.1.0
 */
export const recordAll = (
  workspaceId: WorkspaceId,
  events: ReadonlyArray<NewEvent>
): Effect.Effect<ReadonlyArray<RecordedEvent>> =>
  Effect.suspend(() => {
    for (const event of events) {
      const tooDeep = JsonDepth.depthIssue(event.payload, maxPayloadDepth, "payload")
      if (Option.isSome(tooDeep)) return Effect.die(ValidationError.fromIssues([tooDeep.value], `${event.type} event`))
    }
    const traced = events.every((event) => event.traceparent !== undefined)
    return Effect.zipWith(Clock.currentTimeMillis, traced ? Effect.succeed("") : TraceContext.current, (now, trace) => {
      const createdAt = Math.floor(now / 1000)
      return events.map((event) => {
        const id = event.id ?? Id.makeAt("evt", now)
        const body =
          event.payloadJson === undefined
            ? JSON.stringify({ id, type: event.type, createdAt, payload: event.payload })
            : // What `JSON.stringify` writes for that object, keys in that order.
              `{"id":${JSON.stringify(id)},"type":${JSON.stringify(event.type)},"createdAt":${createdAt},"payload":${event.payloadJson}}`
        const traceparent = event.traceparent ?? trace
        const orderingKey = event.orderingKey ?? null
        return { id, workspaceId, type: event.type, createdAt, payload: event.payload, body, traceparent, orderingKey }
      })
    })
  })

/**
 * Counts recorded events in `waybill_events_published_total` (`Metrics`); adapters call it once
 * the events are written.
 * @since 0.1.0
 */
export const countPublished = (recorded: ReadonlyArray<RecordedEvent | undefined>): Effect.Effect<void> =>
  Effect.sync(() => {
    for (const event of recorded) if (event !== undefined) Metrics.recordPublished(event.type)
  })

/** Reads what an in-memory outbox recorded, for tests and embedders without storage. @since 0.1.0 */
export class MemoryEventLog extends Context.Tag("@waybill/events/MemoryEventLog")<
  MemoryEventLog,
  Recorded<RecordedEvent>
>() {}

/** An in-memory outbox that keeps every recorded event in order. @since 0.1.0 */
export const layerMemory: Layer.Layer<EventOutbox | MemoryEventLog> = Layer.effectContext(
  Effect.gen(function* () {
    const log = yield* Ref.make<ReadonlyArray<RecordedEvent>>([])
    const outbox = EventOutbox.of({
      publish: (workspaceId, events) =>
        recordAll(workspaceId, events).pipe(
          Effect.tap((recorded) => Ref.update(log, (all) => [...all, ...recorded])),
          Effect.tap(countPublished)
        )
    })
    return Context.make(EventOutbox, outbox).pipe(Context.add(MemoryEventLog, { all: Ref.get(log) }))
  })
)
