/**
 * A Vitest worker answers its runner over an RPC that gives up after 60 s: when a test blocks its
 * worker's event loop that long (synchronous child processes, file trees, an embedded database's
 * initdb on a busy machine), the run fails with only `Timeout calling "onTaskUpdate"` although
 * every test passed. The watch names the test that held the loop, well before that limit.
 */

/** What a report says: how long the loop was held, and in which test. */
export interface Blocked {
  readonly milliseconds: number
  readonly test: string
}

/**
 * Checks the event loop every `tickMs` and reports each time one tick came `thresholdMs` or more
 * late. Returns the function that stops the watch; the watch never keeps a process alive.
 */
export const watchEventLoop = (
  thresholdMs: number,
  currentTest: () => string,
  report: (blocked: Blocked) => void,
  tickMs = 1_000
): (() => void) => {
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    const late = now - last - tickMs
    last = now
    if (late >= thresholdMs) report({ milliseconds: Math.round(late), test: currentTest() })
  }, tickMs)
  timer.unref()
  return () => clearInterval(timer)
}
