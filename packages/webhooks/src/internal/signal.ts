/**
 * A wake-up on Effect's `Latch`: `wait` closes it again after waking, so a notification that
 * found nobody waiting makes the next `wait` return at once (no wake-up is lost).
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
