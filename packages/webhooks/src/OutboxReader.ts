/** The fan-out side of the outbox, read under a lease; details: docs/internals.md (OutboxReader). @since 0.1.0 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import { countPublished, EventOutbox, recordAll } from "@waybill/events/EventOutbox"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { NewDelivery } from "./DeliveryStore.js"

/** A recorded event as fan-out reads it; `position` (opaque) is where fan-out stands after it. @since 0.1.0 */
export interface OutboxEvent {
  readonly id: string
  readonly workspaceId: WorkspaceId
  readonly type: string
  readonly createdAt: number
  readonly body: string
  readonly traceparent: string | null
  /**
   * Its ordering key (contract §8, "Ordering by key"); absent or `null` without one.
   * @since 0.3.0
   */
  readonly orderingKey?: string | null | undefined
  readonly position: string
}

/** What one read found, and whether later events wait behind a transaction still open (`waiting`). @since 0.1.0 */
export interface OutboxRead {
  readonly events: ReadonlyArray<OutboxEvent>
  readonly waiting: boolean
  /**
   * Where a store can tell: a token that changes whenever webhooks are added, deleted or revised,
   * read with the events. While it stays the same, fan-out matches against the webhooks it read
   * before; absent, it reads them for every batch.
   * @since 0.3.0
   */
  readonly webhooksVersion?: string | undefined
}

/** Times are epoch milliseconds from the dispatcher's `Clock`. @since 0.1.0 */
export class OutboxReader extends Context.Tag("@waybill/webhooks/OutboxReader")<
  OutboxReader,
  {
    /** Takes or renews the fan-out lease for `owner`: the stored position, or none while another holds it. */
    readonly acquire: (owner: string, now: number, leaseUntil: number) => Effect.Effect<Option.Option<string>>
    /** Up to `limit` events after `position`, in fan-out order. Reads only; no lease needed. */
    readonly read: (position: string, limit: number) => Effect.Effect<OutboxRead>
    /** Stores `position` and keeps the lease (`0` releases it), only while `owner` holds it. */
    readonly advance: (owner: string, position: string, leaseUntil: number) => Effect.Effect<boolean>
    /**
     * Where a store can: `advance` and `DeliveryStore.insert` of `deliveries` as one atomic step
     * (both or neither), answering as `advance` does. Without it, fan-out runs the two in a
     * transaction.
     * @since 0.3.0
     */
    readonly advanceInserting?: (
      owner: string,
      position: string,
      leaseUntil: number,
      deliveries: ReadonlyArray<NewDelivery>
    ) => Effect.Effect<boolean>
  }
>() {}

/** An in-memory outbox serving both sides, `EventOutbox` and `OutboxReader`; positions count events. @since 0.1.0 */
export const layerMemory: Layer.Layer<EventOutbox | OutboxReader> = Layer.effectContext(
  Effect.sync(() => {
    const events: Array<OutboxEvent> = []
    let stored = 0
    let lease: { owner: string; until: number } | undefined
    const outbox = EventOutbox.of({
      publish: (workspaceId, newEvents) =>
        recordAll(workspaceId, newEvents).pipe(
          Effect.tap((recorded) =>
            Effect.sync(() => {
              for (const event of recorded) {
                events.push({
                  id: event.id,
                  workspaceId: event.workspaceId,
                  type: event.type,
                  createdAt: event.createdAt,
                  body: event.body,
                  traceparent: event.traceparent,
                  orderingKey: event.orderingKey,
                  position: String(events.length + 1)
                })
              }
            })
          ),
          Effect.tap(countPublished)
        )
    })
    const reader = OutboxReader.of({
      acquire: (owner, now, leaseUntil) =>
        Effect.sync(() => {
          if (lease !== undefined && lease.owner !== owner && lease.until > now) return Option.none()
          lease = { owner, until: leaseUntil }
          return Option.some(String(stored))
        }),
      read: (position, limit) =>
        Effect.sync(() => ({ events: events.slice(Number(position), Number(position) + limit), waiting: false })),
      advance: (owner, position, leaseUntil) =>
        Effect.sync(() => {
          if (lease?.owner !== owner) return false
          stored = Number(position)
          lease = leaseUntil === 0 ? undefined : { owner, until: leaseUntil }
          return true
        })
    })
    return Context.make(EventOutbox, outbox).pipe(Context.add(OutboxReader, reader))
  })
)
