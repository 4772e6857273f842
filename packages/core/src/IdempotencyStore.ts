/**
 * The storage port of idempotent requests' kept answers, its in-memory adapter, the sweep of
 * expired answers, and the write of an answer with its creation in one transaction.
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Sweep from "./Sweep.js"
import type { Transactor } from "./Transactor.js"
import type { WorkspaceId } from "./Workspace.js"

/**
 * A kept answer: what `operation` (e.g. `POST /drafts`) answered to the body with `fingerprint`
 * for `key` in a workspace. Times are epoch seconds.
 * @since 0.1.0
 */
export interface IdempotencyRecord {
  readonly workspaceId: WorkspaceId
  readonly key: string
  readonly operation: string
  readonly fingerprint: string
  readonly status: number
  readonly body: string
  readonly createdAt: number
  readonly expiresAt: number
}

/** The storage port of kept answers. Storage failures are defects. @since 0.1.0 */
export class IdempotencyStore extends Context.Tag("@waybill/core/IdempotencyStore")<
  IdempotencyStore,
  {
    /** The answer kept for a key of a workspace, if any. */
    readonly find: (workspaceId: WorkspaceId, key: string) => Effect.Effect<Option.Option<IdempotencyRecord>>
    /**
     * Keeps an answer, in the caller's transaction (the one that writes what the request
     * created); `false`, and nothing written, when the key is kept already. A transaction that
     * holds the same key, uncommitted, is waited for.
     */
    readonly insert: (record: IdempotencyRecord) => Effect.Effect<boolean>
    /** Deletes at most `limit` answers whose `expiresAt` is at or before `now`; answers how many. */
    readonly sweep: (now: number, limit: number) => Effect.Effect<number>
  }
>() {}

/** An in-memory store, for tests and embedders without storage. @since 0.1.0 */
export const makeMemory = (): IdempotencyStore["Type"] => {
  const records = new Map<string, IdempotencyRecord>()
  const id = (workspaceId: string, key: string) => `${workspaceId}\u0000${key}`
  return IdempotencyStore.of({
    find: (workspaceId, key) => Effect.sync(() => Option.fromNullable(records.get(id(workspaceId, key)))),
    insert: (record) =>
      Effect.sync(() => {
        const at = id(record.workspaceId, record.key)
        if (records.has(at)) return false
        records.set(at, record)
        return true
      }),
    sweep: (now, limit) =>
      Effect.sync(() => {
        let deleted = 0
        for (const [at, record] of records) {
          if (deleted >= limit) break
          if (record.expiresAt <= now) {
            records.delete(at)
            deleted++
          }
        }
        return deleted
      })
  })
}

/** Kept answers one sweep step deletes at most (one statement each step). @since 0.1.0 */
export const sweepBatchSize = 1_000

/**
 * Deletes every kept answer whose time is up by the `Clock`'s now, in steps of `sweepBatchSize`;
 * answers how many. Answers are kept `Idempotency.retentionSeconds` at least, and until the next
 * sweep at most.
 * @since 0.1.0
 */
export const sweepExpired: Effect.Effect<number, never, IdempotencyStore> = Effect.flatMap(IdempotencyStore, (store) =>
  Sweep.inSteps(sweepBatchSize, store.sweep)
)

// Rolls a transaction back when the record's key turns out to be kept already.
class KeyTaken extends Data.TaggedError("@waybill/core/Idempotency/KeyTaken") {}

/**
 * The creation written with its record in one `Transactor` transaction, for adapters without a
 * write of their own that takes records (see `DraftRepository.insertPublishingIdempotent`): the
 * key looked up (in memory, under the transaction's lock, that decides), `write`, then the record.
 * Answers true when both were committed, false when the key was kept already (found, or found by
 * the insert after another process committed it: rolled back), as `Idempotency.complete` takes it.
 * @since 0.1.0
 */
export const writeInTransaction = <E, R>(
  transactor: Transactor["Type"],
  store: IdempotencyStore["Type"],
  record: IdempotencyRecord,
  write: Effect.Effect<unknown, E, R>
): Effect.Effect<boolean, E, R> =>
  transactor
    .withTransaction(
      Effect.flatMap(store.find(record.workspaceId, record.key), (found) =>
        Option.isSome(found)
          ? Effect.succeed(false)
          : Effect.flatMap(write, () =>
              Effect.flatMap(store.insert(record), (inserted) =>
                inserted ? Effect.succeed(true) : Effect.fail(new KeyTaken())
              )
            )
      )
    )
    .pipe(
      Effect.catchIf(
        (error): error is KeyTaken => error instanceof KeyTaken,
        () => Effect.succeed(false)
      )
    )
