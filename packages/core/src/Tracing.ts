/**
 * Spans on hot paths, made only when a tracer is on. `Effect.withSpan` makes a span even with the
 * tracer off: a no-op span, and a copy of the fiber's whole context to make it the parent, which
 * cost a tenth of a `POST /events` in the reference server (docs/benchmarks.md, Throughput). With
 * the tracer off (`Effect.withTracerEnabled(false)`), `withSpan` here runs the effect as it is;
 * with it on, exactly as `Effect.withSpan`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import type * as FiberStatus from "effect/FiberStatus"
import * as RuntimeFlags from "effect/RuntimeFlags"
import type * as Tracer from "effect/Tracer"

/**
 * `Effect.withSpan(name, options)` while the fiber's tracer is on; nothing otherwise.
 *
 * @since 0.1.0
 * @category tracing
 */
export const withSpan =
  (name: string, options?: Tracer.SpanOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime<A, E, R>((fiber) =>
      fiber.getFiberRef(FiberRef.currentTracerEnabled) ? Effect.withSpan(self, name, options) : self
    )

/**
 * Runs `self`, then `finish` with its exit (success, failure or interruption), as
 * `Effect.onExit(self, (exit) => Effect.sync(() => finish(exit)))` does. Where the fiber already
 * runs uninterruptibly (`status`, from `Effect.withFiberRuntime`: a platform HTTP handler runs
 * its middleware so), one match does it: nothing can stop the fiber between `self`'s end and
 * `finish`, and an interruption inside `self` unwinds to it. `onExit`'s mask, its restore and its
 * `zipRight` are about ten steps, half of what a traced event adds (docs/benchmarks.md). `finish`
 * must not throw.
 *
 * @since 0.1.0
 * @category tracing
 */
export const onExitSync = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  status: FiberStatus.Running,
  finish: (exit: Exit.Exit<A, E>) => void
): Effect.Effect<A, E, R> => {
  if (RuntimeFlags.interruptible(status.runtimeFlags)) {
    return Effect.onExit(self, (exit) => Effect.sync(() => finish(exit)))
  }
  return Effect.matchCauseEffect(self, {
    onFailure: (cause) => {
      const exit = Exit.failCause(cause)
      finish(exit)
      return exit
    },
    onSuccess: (value) => {
      const exit = Exit.succeed(value)
      finish(exit)
      return exit
    }
  })
}
