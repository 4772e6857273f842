/**
 * The port through which the generator sees recurring masters. The drafts side implements it over
 * its own storage (it owns statuses, actions and their events); this package only asks. Several
 * server processes may run generators against one database. The PostgreSQL adapter makes that safe
 * by claiming each master with `SELECT … FOR UPDATE SKIP LOCKED` inside the generator's per-master
 * transaction: a master locked by another process is skipped this run.
 * @since 0.1.0
 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { RecurringMaster } from "./RecurringMaster.js"

/**
 * Identifies a master (a draft id in its workspace).
 * @since 0.1.0
 */
export interface MasterRef {
  readonly workspaceId: WorkspaceId
  readonly id: string
}

/**
 * The generation status of a master: `active-recurring` or `paused-recurring`.
 * @since 0.1.0
 */
export type Status = "active" | "paused"

/**
 * A master with its generation state, as listed (possibly stale) or claimed (fresh, locked).
 * @since 0.1.0
 */
export interface MasterState {
  readonly master: RecurringMaster
  readonly status: Status
  /**
   * Epoch seconds up to which (exclusive) tours have been generated; `null` before the first
   * run. Owned by the generator: only `advance` moves it.
   */
  readonly cursor: number | null
  /**
   * Epoch seconds of the latest `activate-recurring` or `resume-recurring`. Triggers before it
   * are never generated: that is "not before the activation" and "no back-fill after a pause".
   */
  readonly activeSince: number
}

/**
 * The same as `MasterState` (the name under which claims were first published).
 * @since 0.1.0
 */
export type ClaimedMaster = MasterState

/**
 * An entry of `list`: just the ref (the generator claims it), or the master's state (the
 * generator first checks whether anything is due and skips it without a transaction if not).
 * @since 0.1.0
 */
export type Listed = MasterRef | MasterState

/**
 * The ref of a listed entry.
 * @since 0.1.0
 */
export const refOf = (listed: Listed): MasterRef =>
  "master" in listed ? { workspaceId: listed.master.workspaceId, id: listed.master.id } : listed

/**
 * @since 0.1.0
 */
export class RecurringMasterRepository extends Context.Tag("@waybill/recurring/RecurringMasterRepository")<
  RecurringMasterRepository,
  {
    /**
     * The masters a run should look at: every active one, and every paused one whose `endsAt`
     * is at or before `now` (it must end). Read outside any transaction, without locks.
     * Entries may be bare refs (each is claimed) or states: with a state the generator skips,
     * without a transaction or a write, an active master with nothing due before its horizon.
     * A stale state is safe for that (a cursor or `activeSince` only ever grows, so a stale one
     * covers at least the real slice); the claim re-reads everything fresh.
     */
    readonly list: (now: number) => Effect.Effect<ReadonlyArray<Listed>>
    /**
     * Inside the run's transaction: locks the master and reads it fresh. `None` when it is
     * locked by another process (PostgreSQL: `FOR UPDATE SKIP LOCKED`) or no longer active or
     * paused (ended, deleted).
     */
    readonly claim: (ref: MasterRef) => Effect.Effect<Option.Option<MasterState>>
    /** Moves the cursor forward (never back: `GREATEST(cursor, $1)`). Called after storing. */
    readonly advance: (ref: MasterRef, cursor: number) => Effect.Effect<void>
    /**
     * Ends the master (status `ended-recurring`, actor `system`, with its events) because its
     * window has passed. Called inside the run's transaction, after the last tours are stored.
     */
    readonly end: (ref: MasterRef, at: number) => Effect.Effect<void>
  }
>() {}

/**
 * What the in-memory store keeps per master.
 * @since 0.1.0
 */
export interface MemoryMaster {
  readonly master: RecurringMaster
  readonly status: Status | "ended"
  readonly cursor: number | null
  readonly activeSince: number
  readonly endedAt: number | null
}

/**
 * Drives the in-memory store the way the drafts side drives a real one (tests, embedders).
 * @since 0.1.0
 */
export class MemoryMasters extends Context.Tag("@waybill/recurring/MemoryMasters")<
  MemoryMasters,
  {
    /** Adds or replaces a master as active since `activeSince` (activation). */
    readonly activate: (master: RecurringMaster, activeSince: number) => Effect.Effect<void>
    readonly pause: (ref: MasterRef) => Effect.Effect<void>
    /** Active again from `at` on; triggers during the pause are not back-filled. */
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

/**
 * An in-memory store of masters. It does not lock: with `Transactor.layerMemory` runs are
 * serialised anyway, and without it the tour key still prevents duplicates.
 * @since 0.1.0
 */
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
