/**
 * Group commit: concurrent callers that each write one item share writes. While one write is in
 * flight, the items that arrive queue up, and the next write takes them all (one write per key,
 * a workspace for example). An item that arrives when nothing is being written is written at
 * once, so a quiet process adds no delay; a busy one makes far fewer, larger writes, which is
 * what a database's per-statement cost (a round trip, a plan, a commit) asks for.
 *
 * Each caller gets its own result, or its own failure: a write that fails for a group of several
 * items is tried again one item at a time, unless the storage is out (`Availability.isOutage`,
 * when an `Availability` is in context), in which case every caller of the group gets the
 * outage. So one item the storage refuses fails alone.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Availability from "./Availability.js"

/**
 * How to group and write items.
 *
 * @since 0.1.0
 * @category models
 */
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
 *
 * @since 0.1.0
 * @category models
 */
export type Submit<A, B, E> = (item: A) => Effect.Effect<B, E>

interface Waiting<A, B, E> {
  readonly item: A
  readonly resume: (result: Effect.Effect<B, E>) => void
  cancelled: boolean
}

/**
 * Starts the writer in the scope and returns `submit`. When the scope closes, callers still
 * waiting, or whose write is cut short, are interrupted rather than left waiting.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <K, A, B, E>(options: Options<K, A, B, E>): Effect.Effect<Submit<A, B, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const maxBatch = options.maxBatch ?? 256
    const availability = yield* Effect.serviceOption(Availability.Availability)
    const isOutage = (cause: Cause.Cause<unknown>) =>
      Option.isSome(availability) && availability.value.isOutage(Cause.squash(cause))
    let queue: Array<Waiting<A, B, E>> = []
    // The writer is the only fiber that waits for work, so one callback is the whole signal.
    let wake: ((effect: Effect.Effect<void>) => void) | undefined
    const arrival = Effect.async<void>((resume) => {
      wake = resume
      return Effect.sync(() => {
        wake = undefined
      })
    })

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
                entry.resume(Exit.isSuccess(exit) ? Effect.succeed(exit.value[index]!) : Effect.failCause(exit.cause))
              })
            })
          }
          return Effect.forEach(waiting, (entry) => writeGroup(key, [entry]), {
            concurrency: "unbounded",
            discard: true
          })
        }
      )

    const writer = Effect.forever(
      Effect.gen(function* () {
        if (queue.length === 0) yield* arrival
        const taken = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch)
        queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch)
        const groups = new Map<K, Array<Waiting<A, B, E>>>()
        for (const entry of taken) {
          if (entry.cancelled) continue
          const key = options.key(entry.item)
          const group = groups.get(key)
          if (group === undefined) groups.set(key, [entry])
          else group.push(entry)
        }
        const write = ([key, waiting]: [K, Array<Waiting<A, B, E>>]) =>
          Effect.onInterrupt(writeGroup(key, waiting), () =>
            Effect.sync(() => {
              for (const entry of waiting) entry.resume(Effect.interrupt)
            })
          )
        // One key (one workspace, the usual case) needs no fiber of its own.
        if (groups.size === 1) yield* write(groups.entries().next().value!)
        else if (groups.size > 1) yield* Effect.forEach(groups, write, { concurrency: "unbounded", discard: true })
      })
    )
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const entry of queue) entry.resume(Effect.interrupt)
        queue = []
      })
    )
    yield* Effect.forkScoped(writer)

    return (item) =>
      Effect.async<B, E>((resume) => {
        const entry: Waiting<A, B, E> = { item, resume, cancelled: false }
        queue.push(entry)
        if (wake !== undefined) {
          const resumeWriter = wake
          wake = undefined
          resumeWriter(Effect.void)
        }
        return Effect.sync(() => {
          entry.cancelled = true
        })
      })
  })
