/**
 * Whether this process is busy: the share of the last stretch of time its event loop spent
 * working rather than waiting (Node's `performance.eventLoopUtilization`), measured afresh once
 * `windowMs` has passed. Where the runtime has no such measure, never busy.
 */

interface Utilization {
  readonly idle: number
  readonly active: number
  readonly utilization: number
}
type Measure = (since?: Utilization) => Utilization

const measure: Measure | undefined = (
  globalThis.performance as { eventLoopUtilization?: Measure } | undefined
)?.eventLoopUtilization?.bind(globalThis.performance)

/** A gauge: `busy(now)` answers from the last full window, measuring a new one when it is due. */
export const make = (threshold: number, windowMs: number) => {
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
