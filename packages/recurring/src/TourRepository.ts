/**
 * The storage port for generated tours. A tour is unique by `(draftId, triggerAt)`, so a restart
 * or two generators at once never store a tour twice.
 * @since 0.1.0
 */
import type { Recorded } from "@waybill/core/Recorded"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { MasterRef } from "./RecurringMasterRepository.js"
import type { Tour } from "./Tour.js"

/** @since 0.1.0 */
export class TourRepository extends Context.Tag("@waybill/recurring/TourRepository")<
  TourRepository,
  {
    /** Stores the tours whose key is new and returns exactly those, in the caller's transaction. */
    readonly insertIfAbsent: (master: MasterRef, tours: ReadonlyArray<Tour>) => Effect.Effect<ReadonlyArray<Tour>>
  }
>() {}

/** A stored tour with its workspace. @since 0.1.0 */
export interface StoredTour {
  readonly workspaceId: WorkspaceId
  readonly tour: Tour
}

/** Reads what the in-memory repository holds, in insertion order. @since 0.1.0 */
export class MemoryTours extends Context.Tag("@waybill/recurring/MemoryTours")<MemoryTours, Recorded<StoredTour>>() {}

const keyOf = (tour: Tour): string => `${tour.draftId}\u0000${tour.triggerAt}`

/** An in-memory repository (tests, embedders without storage); each insert is atomic. @since 0.1.0 */
export const layerMemory: Layer.Layer<TourRepository | MemoryTours> = Layer.syncContext(() => {
  // Atomic: each `Effect.sync` call runs without a yield point.
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
