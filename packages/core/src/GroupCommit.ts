/**
 * Group commit: while one write is in flight, arriving items queue up and the next write takes them
 * all (one write per key). A group's failed write is tried again item by item, unless the storage is
 * out. Why and what it saves: docs/decisions/0049.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Availability from "./Availability.js"

/** How to group and write items. @since 0.1.0 */
export interface Options<K, A, B, E> {
  /** Items with equal keys (compared with `===`) may share a write. */
  readonly key: (item: A) => K
  /** Writes the items, all or none, and returns one result per item, in their order. */
  readonly write: (key: K, items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E>
  /** The most items one write takes (default 256). */
  readonly maxBatch?: number | undefined
}

/**
 * Writes one item, sharing the write with whatever else is waiting. A caller interrupted before
 * its write starts leaves nothing written; once started, the write commits or not as a whole.
 * @since 0.1.0
 */
export type Submit<A, B, E> = (item: A) => Effect.Effect<B, E>

interface Waiting<A, B, E> {
  readonly item: A
  readonly result: Deferred.Deferred<B, E>
  cancelled: boolean
}

/**
 * Starts the writer in the scope and returns `submit`. When the scope closes, callers still
 * waiting, or whose write is cut short, are interrupted rather than left waiting.
 * @since 0.1.0
 */
export const make = <K, A, B, E>(options: Options<K, A, B, E>): Effect.Effect<Submit<A, B, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const maxBatch = options.maxBatch ?? 256
    const availability = yield* Effect.serviceOption(Availability.Availability)
    const isOutage = (cause: Cause.Cause<unknown>) =>
      Option.isSome(availability) && availability.value.isOutage(Cause.squash(cause))
    // Items wait here, not in a `Queue`: a `Queue.take` interrupted once it has been handed an
    // item drops that item, and its caller would wait for ever.
    const pending: Array<Waiting<A, B, E>> = []
    let closed = false
    const arrived = Effect.unsafeMakeLatch(false)

    const writeGroup = (key: K, waiting: ReadonlyArray<Waiting<A, B, E>>): Effect.Effect<void> =>
      Effect.flatMap(
        Effect.exit(
          options.write(
            key,
            waiting.map((entry) => entry.item)
          )
        ),
        (exit) => {
          if (Exit.isSuccess(exit) || waiting.length === 1 || isOutage(exit.cause)) {
            return Effect.sync(() => {
              waiting.forEach((entry, index) => {
                Deferred.unsafeDone(
                  entry.result,
                  Exit.isSuccess(exit) ? Exit.succeed(exit.value[index]!) : Exit.failCause(exit.cause)
                )
              })
            })
          }
          return Effect.forEach(waiting, (entry) => writeGroup(key, [entry]), {
            concurrency: "unbounded",
            discard: true
          })
        }
      )

    const interruptAll = (waiting: Iterable<Waiting<A, B, E>>) =>
      Effect.forEach(waiting, (entry) => Deferred.interrupt(entry.result), { discard: true })

    const writeAll = (entries: ReadonlyArray<Waiting<A, B, E>>): Effect.Effect<void> => {
      const groups = new Map<K, Array<Waiting<A, B, E>>>()
      for (const entry of entries) {
        if (entry.cancelled) continue
        const key = options.key(entry.item)
        const group = groups.get(key)
        if (group === undefined) groups.set(key, [entry])
        else group.push(entry)
      }
      const write = ([key, waiting]: [K, Array<Waiting<A, B, E>>]) =>
        Effect.onInterrupt(writeGroup(key, waiting), () => interruptAll(waiting))
      // One key (one workspace, the usual case) needs no fiber of its own.
      if (groups.size === 1) return write(groups.entries().next().value!)
      return Effect.forEach(groups, write, { concurrency: "unbounded", discard: true })
    }

    // Items are taken and their interruption handled in one step: none is out of reach of both
    // the write and the finalizer.
    const writer = Effect.forever(
      Effect.uninterruptibleMask((restore) => {
        if (pending.length === 0) return restore(Effect.zipRight(arrived.await, arrived.close))
        const taken = pending.splice(0, maxBatch)
        return Effect.onInterrupt(restore(writeAll(taken)), () => interruptAll(taken))
      })
    )
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        return interruptAll(pending.splice(0))
      })
    )
    yield* Effect.forkScoped(writer)

    return (item) =>
      Effect.suspend(() => {
        const entry: Waiting<A, B, E> = { item, result: Deferred.unsafeMake<B, E>(FiberId.none), cancelled: false }
        // Closed with its scope: nothing will write the item.
        if (closed) return Effect.interrupt
        pending.push(entry)
        arrived.unsafeOpen()
        return Effect.onInterrupt(Deferred.await(entry.result), () =>
          Effect.sync(() => {
            entry.cancelled = true
          })
        )
      })
  })
