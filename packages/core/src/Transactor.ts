/**
 * The unit-of-work port: runs an effect so that all writes made through ports inside it commit
 * together or not at all (a state change and the events it raises, contract §5 outbox).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * @since 0.1.0
 * @category tags
 */
export class Transactor extends Context.Tag("@waybill/core/Transactor")<
  Transactor,
  {
    readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  }
>() {}

/**
 * Runs an effect inside the current `Transactor`'s transaction.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withTransaction = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Transactor> =>
  Effect.flatMap(Transactor, (transactor) => transactor.withTransaction(self))

/**
 * For in-memory ports: one transaction at a time, so read-check-write sequences inside a
 * transaction never interleave (the in-memory stand-in for row locks).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<Transactor> = Layer.sync(Transactor, () => {
  const lock = Effect.unsafeMakeSemaphore(1)
  return {
    withTransaction: (self) => lock.withPermits(1)(self)
  }
})
