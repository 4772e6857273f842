/**
 * The storage port for generated tours. Its one rule: a tour is unique by
 * `(draftId, triggerAt)` (the trigger in epoch seconds), so a restart or two generators running
 * at once never store a tour twice. The PostgreSQL adapter is a unique index plus
 * `INSERT … ON CONFLICT (draft_id, trigger_at) DO NOTHING RETURNING …`.
 * @since 0.1.0
 */
import type { Recorded } from "@waybill/core/Recorded"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { MasterRef } from "./RecurringMasterRepository.js"
import type { Tour } from "./Tour.js"

/**
 * @since 0.1.0
 */
export class TourRepository extends Context.Tag("@waybill/recurring/TourRepository")<
  TourRepository,
  {
    /**
     * Stores each of `master`'s tours whose `(draftId, triggerAt)` is not stored yet and returns
     * exactly those (in input order); the others are left untouched. Runs inside the caller's
     * transaction, like `RecurringMasterRepository`'s calls for the same master.
     */
    readonly insertIfAbsent: (master: MasterRef, tours: ReadonlyArray<Tour>) => Effect.Effect<ReadonlyArray<Tour>>
  }
>() {}

/**
 * A stored tour with its workspace.
 * @since 0.1.0
 */
export interface StoredTour {
  readonly workspaceId: WorkspaceId
  readonly tour: Tour
}

/**
 * Reads what the in-memory repository holds, in insertion order.
 * @since 0.1.0
 */
export class MemoryTours extends Context.Tag("@waybill/recurring/MemoryTours")<MemoryTours, Recorded<StoredTour>>() {}

const keyOf = (tour: Tour): string => `${tour.draftId}\u0000${tour.triggerAt}`

/**
 * An in-memory repository (tests, embedders without storage). Insert-if-absent is one atomic
 * step, so interleaved generators cannot both insert the same tour.
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<TourRepository | MemoryTours> = Layer.syncContext(() => {
  // Plain mutable state behind `Effect.sync`: each call runs without a yield point, so it is atomic.
  const keys = new Set<string>()
  const stored: Array<StoredTour> = []
  const repository = TourRepository.of({
    insertIfAbsent: ({ workspaceId }, tours) =>
      Effect.sync(() => {
        const inserted: Array<Tour> = []
        for (const tour of tours) {
          const key = keyOf(tour)
          if (keys.has(key)) continue
          keys.add(key)
          inserted.push(tour)
          stored.push({ workspaceId, tour })
        }
        return inserted
      })
  })
  return Context.make(TourRepository, repository).pipe(
    Context.add(MemoryTours, { all: Effect.sync(() => stored.slice()) })
  )
})
