/**
 * Whether this process is busy: the share of the last stretch of time its event loop spent
 * working rather than waiting (Node's `performance.eventLoopUtilization`), measured afresh once
 * `windowMs` has passed. Where the runtime has no such measure, never busy.
 */

/** What `performance.eventLoopUtilization` answers: totals, or the difference since `since`. */
export interface Utilization {
  readonly idle: number
  readonly active: number
  readonly utilization: number
}

/** `performance.eventLoopUtilization`'s signature, so that tests can script the loop's time. */
export type Measure = (since?: Utilization) => Utilization

const eventLoop: Measure | undefined = (
  globalThis.performance as { eventLoopUtilization?: Measure } | undefined
)?.eventLoopUtilization?.bind(globalThis.performance)

/**
 * A gauge: `busy(now)` answers from the last full window, measuring a new one when it is due;
 * `measure` is this event loop's unless given.
 */
export const make = (threshold: number, windowMs: number, measure: Measure | undefined = eventLoop) => {
  if (measure === undefined) return { busy: (_now: number) => false }
  let last = measure()
  let since: number | undefined
  let busy = false
  return {
    busy: (now: number): boolean => {
      // The first window starts at the first question.
      if (since === undefined) {
        last = measure()
        since = now
      } else if (now - since >= windowMs) {
        const current = measure()
        busy = measure(last).utilization >= threshold
        last = current
        since = now
      }
      return busy
    }
  }
}
