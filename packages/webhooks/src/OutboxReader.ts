/**
 * The fan-out side of the outbox: the dispatcher claims recorded events that are not fanned out
 * yet, marking them fanned out, and writes their deliveries, all in one transaction. On
 * PostgreSQL `claimPending` is one `UPDATE events SET fanned_out_at = … WHERE seq IN (SELECT …
 * WHERE fanned_out_at IS NULL ORDER BY seq LIMIT n FOR UPDATE SKIP LOCKED) RETURNING …`, so
 * several dispatchers fan out disjoint events; a crash rolls the whole batch back and it is
 * fanned out again.
 *
 * @since 0.1.0
 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import { EventOutbox, record } from "@waybill/events/EventOutbox"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * A recorded event as fan-out reads it: `body` is the delivery body, fixed when the event was
 * recorded (`{ id, type, createdAt, payload }`); fan-out parses it once to evaluate filters.
 *
 * @since 0.1.0
 * @category models
 */
export interface OutboxEvent {
  readonly id: string
  readonly workspaceId: WorkspaceId
  readonly type: string
  /** Epoch seconds. */
  readonly createdAt: number
  readonly body: string
}

/**
 * @since 0.1.0
 * @category tags
 */
export class OutboxReader extends Context.Tag("@waybill/webhooks/OutboxReader")<
  OutboxReader,
  {
    /**
     * Up to `limit` events not fanned out yet, oldest first, marked fanned out at `at` (epoch
     * seconds) in the caller's transaction: they stay pending if it rolls back.
     */
    readonly claimPending: (limit: number, at: number) => Effect.Effect<ReadonlyArray<OutboxEvent>>
  }
>() {}

/**
 * An in-memory outbox that serves both sides: producers `publish` through `EventOutbox`, fan-out
 * reads through `OutboxReader`. Run fan-out under the in-memory `Transactor` (one transaction at
 * a time), as the dispatcher does.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<EventOutbox | OutboxReader> = Layer.effectContext(
  Effect.sync(() => {
    const events: Array<OutboxEvent> = []
    const fannedOut = new Set<string>()
    let firstPending = 0
    const outbox = EventOutbox.of({
      publish: (workspaceId, newEvents) =>
        Effect.forEach(newEvents, (event) => record(workspaceId, event)).pipe(
          Effect.tap((recorded) =>
            Effect.sync(() => {
              for (const event of recorded) {
                events.push({
                  id: event.id,
                  workspaceId: event.workspaceId,
                  type: event.type,
                  createdAt: event.createdAt,
                  body: event.body
                })
              }
            })
          )
        )
    })
    const reader = OutboxReader.of({
      claimPending: (limit) =>
        Effect.sync(() => {
          while (firstPending < events.length && fannedOut.has(events[firstPending]!.id)) firstPending++
          const claimed: Array<OutboxEvent> = []
          for (let i = firstPending; i < events.length && claimed.length < limit; i++) {
            if (!fannedOut.has(events[i]!.id)) claimed.push(events[i]!)
          }
          for (const event of claimed) fannedOut.add(event.id)
          return claimed
        })
    })
    return Context.make(EventOutbox, outbox).pipe(Context.add(OutboxReader, reader))
  })
)
