/**
 * The port through which the generator sees recurring masters; the drafts side implements it
 * over its own storage (docs/recurring.md, What a storage adapter must do).
 * @since 0.1.0
 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { RecurringMaster } from "./RecurringMaster.js"

/** Identifies a master (a draft id in its workspace). @since 0.1.0 */
export interface MasterRef {
  readonly workspaceId: WorkspaceId
  readonly id: string
}

/** The generation status of a master: `active-recurring` or `paused-recurring`. @since 0.1.0 */
export type Status = "active" | "paused"

/** A master with its generation state, as listed (possibly stale) or claimed (fresh, locked). @since 0.1.0 */
export interface MasterState {
  readonly master: RecurringMaster
  readonly status: Status
  /** Epoch seconds up to which (exclusive) tours exist; `null` before the first run. */
  readonly cursor: number | null
  /** Epoch seconds of the latest activation or resumption; earlier triggers are never generated. */
  readonly activeSince: number
}

/** The same as `MasterState`, under its earlier name. @since 0.1.0 */
export type ClaimedMaster = MasterState

/**
 * An entry of `list`: a ref (always claimed), or a state (skipped without a transaction when
 * nothing is due).
 * @since 0.1.0
 */
export type Listed = MasterRef | MasterState

/** The ref of a listed entry. @since 0.1.0 */
export const refOf = (listed: Listed): MasterRef =>
  "master" in listed ? { workspaceId: listed.master.workspaceId, id: listed.master.id } : listed

/** @since 0.1.0 */
export class RecurringMasterRepository extends Context.Tag("@waybill/recurring/RecurringMasterRepository")<
  RecurringMasterRepository,
  {
    /**
     * Every active master and every paused one whose `endsAt` ≤ `now`, read without locks. A stale
     * state is safe: cursor and `activeSince` only grow, and the claim re-reads.
     */
    readonly list: (now: number) => Effect.Effect<ReadonlyArray<Listed>>
    /** Locks and re-reads, in the run's transaction; `None` if locked elsewhere or not running. */
    readonly claim: (ref: MasterRef) => Effect.Effect<Option.Option<MasterState>>
    /** Moves the cursor forward, never back. Called after storing. */
    readonly advance: (ref: MasterRef, cursor: number) => Effect.Effect<void>
    /** Ends the master as `system` once its window has passed, in the run's transaction. */
    readonly end: (ref: MasterRef, at: number) => Effect.Effect<void>
  }
>() {}

/** What the in-memory store keeps per master. @since 0.1.0 */
export interface MemoryMaster {
  readonly master: RecurringMaster
  readonly status: Status | "ended"
  readonly cursor: number | null
  readonly activeSince: number
  readonly endedAt: number | null
}

/** Drives the in-memory store as the drafts side drives a real one (tests, embedders). @since 0.1.0 */
export class MemoryMasters extends Context.Tag("@waybill/recurring/MemoryMasters")<
  MemoryMasters,
  {
    readonly activate: (master: RecurringMaster, activeSince: number) => Effect.Effect<void>
    readonly pause: (ref: MasterRef) => Effect.Effect<void>
    readonly resume: (ref: MasterRef, at: number) => Effect.Effect<void>
    readonly get: (ref: MasterRef) => Effect.Effect<Option.Option<MemoryMaster>>
  }
>() {}

const keyOf = (ref: MasterRef): string => `${ref.workspaceId}\u0000${ref.id}`

const toState = (entry: MemoryMaster): MasterState => ({
  master: entry.master,
  status: entry.status === "paused" ? "paused" : "active",
  cursor: entry.cursor,
  activeSince: entry.activeSince
})

/** An in-memory store of masters, without locks: the tour key still prevents duplicates. @since 0.1.0 */
export const layerMemory: Layer.Layer<RecurringMasterRepository | MemoryMasters> = Layer.syncContext(() => {
  const masters = new Map<string, MemoryMaster>()
  const update = (ref: MasterRef, f: (current: MemoryMaster) => MemoryMaster) =>
    Effect.sync(() => {
      const current = masters.get(keyOf(ref))
      if (current !== undefined) masters.set(keyOf(ref), f(current))
    })
  const port = RecurringMasterRepository.of({
    list: (now) =>
      Effect.sync(() =>
        Array.from(masters.values())
          .filter(
            (entry) =>
              entry.status === "active" ||
              (entry.status === "paused" &&
                entry.master.schedule.endsAt !== undefined &&
                entry.master.schedule.endsAt <= now)
          )
          .map(toState)
      ),
    claim: (ref) =>
      Effect.sync(() => {
        const entry = masters.get(keyOf(ref))
        return entry === undefined || entry.status === "ended" ? Option.none() : Option.some(toState(entry))
      }),
    advance: (ref, cursor) =>
      update(ref, (entry) => ({ ...entry, cursor: entry.cursor === null ? cursor : Math.max(entry.cursor, cursor) })),
    end: (ref, at) =>
      update(ref, (entry) => (entry.status === "ended" ? entry : { ...entry, status: "ended", endedAt: at }))
  })
  const control = MemoryMasters.of({
    activate: (master, activeSince) =>
      Effect.sync(() => {
        masters.set(keyOf({ workspaceId: master.workspaceId, id: master.id }), {
          master,
          status: "active",
          cursor: null,
          activeSince,
          endedAt: null
        })
      }),
    pause: (ref) => update(ref, (entry) => (entry.status === "active" ? { ...entry, status: "paused" } : entry)),
    resume: (ref, at) =>
      update(ref, (entry) => (entry.status === "paused" ? { ...entry, status: "active", activeSince: at } : entry)),
    get: (ref) => Effect.sync(() => Option.fromNullable(masters.get(keyOf(ref))))
  })
  return Context.make(RecurringMasterRepository, port).pipe(Context.add(MemoryMasters, control))
})
