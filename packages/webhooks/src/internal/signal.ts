import * as Effect from "effect/Effect"

/**
 * A wake-up flag for the dispatcher's loops: `notify` wakes every fiber in `wait`, or, when none
 * waits, makes the next `wait` return at once. Cheaper than a queue: no object per wait beyond
 * the callback, which matters at one wait per delivery.
 */
export interface Signal {
  readonly notify: () => void
  readonly wait: Effect.Effect<void>
}

export const make = (): Signal => {
  let pending = false
  let waiters: Array<(effect: Effect.Effect<void>) => void> = []
  const notify = () => {
    if (waiters.length === 0) {
      pending = true
      return
    }
    const woken = waiters
    waiters = []
    for (const resume of woken) resume(Effect.void)
  }
  const wait = Effect.suspend(() => {
    if (pending) {
      pending = false
      return Effect.void
    }
    return Effect.async<void>((resume) => {
      waiters.push(resume)
      return Effect.sync(() => {
        waiters = waiters.filter((waiter) => waiter !== resume)
      })
    })
  })
  return { notify, wait }
}
