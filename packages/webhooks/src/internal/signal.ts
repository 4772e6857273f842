/**
 * A wake-up for the dispatcher's loops on Effect's `Latch`: `notify` opens it, waking every
 * fiber in `wait`; `wait` waits until it is open and closes it again, so a notification that
 * found nobody waiting makes the next `wait` return at once.
 */
import * as Effect from "effect/Effect"

export interface Signal {
  readonly notify: () => void
  readonly wait: Effect.Effect<void>
}

export const make = (): Signal => {
  const latch = Effect.unsafeMakeLatch(false)
  return { notify: () => latch.unsafeOpen(), wait: Effect.zipRight(latch.await, latch.close) }
}
