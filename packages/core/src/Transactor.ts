/**
 * The unit-of-work port: runs an effect so that all writes made through ports inside it commit
 * together or not at all (a state change and the events it raises).
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"

/** @since 0.1.0 */
export class Transactor extends Context.Tag("@waybill/core/Transactor")<
  Transactor,
  {
    readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  }
>() {}

/** Runs an effect inside the current `Transactor`'s transaction. @since 0.1.0 */
export const withTransaction = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Transactor> =>
  Effect.flatMap(Transactor, (transactor) => transactor.withTransaction(self))

// Set inside a memory transaction, so a nested one joins it instead of waiting for itself.
const inMemoryTransaction = FiberRef.unsafeMake(false)

/**
 * For in-memory ports: one transaction at a time, the stand-in for row locks. A transaction opened
 * inside another (by the same fiber or one it forked) joins it rather than wait for its caller's lock.
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<Transactor> = Layer.sync(Transactor, () => {
  const lock = Effect.unsafeMakeSemaphore(1)
  return {
    withTransaction: (self) =>
      Effect.flatMap(FiberRef.get(inMemoryTransaction), (joined) =>
        joined ? self : lock.withPermits(1)(Effect.locally(self, inMemoryTransaction, true))
      )
  }
})
