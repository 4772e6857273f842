/**
 * Spans on hot paths, made only when a tracer is on. `Effect.withSpan` makes a span even with the
 * tracer off: a no-op span, and a copy of the fiber's whole context to make it the parent, which
 * cost a tenth of a `POST /events` in the reference server (docs/benchmarks.md, Throughput). With
 * the tracer off (`Effect.withTracerEnabled(false)`), `withSpan` here runs the effect as it is;
 * with it on, exactly as `Effect.withSpan`.
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import type * as FiberStatus from "effect/FiberStatus"
import type * as Option from "effect/Option"
import * as RuntimeFlags from "effect/RuntimeFlags"
import type * as Tracer from "effect/Tracer"

/**
 * `Effect.withSpan(name, options)` while the fiber's tracer is on; nothing otherwise.
 * @since 0.1.0
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
 * @since 0.1.0
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

/**
 * Runs `use(span)` in a span made with the fiber's own tracer (`fiber.currentTracer.span`),
 * started and ended by the fiber's clock; `finish` sees the span and the exit just before the
 * span ends (`onExitSync`). Unlike `Effect.useSpan`, nothing reads the fiber's span annotations
 * and links, which copies the fiber's whole map of references for every span: for spans that
 * have none, on hot paths (a request's, an attempt's). `use` runs at once, so it can set the
 * span's first attributes and read its ids.
 * @since 0.1.0
 */
export const fiberSpan = <A, E, R>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  status: FiberStatus.Running,
  span: {
    readonly name: string
    readonly parent: Option.Option<Tracer.AnySpan>
    readonly kind: Tracer.SpanKind
  },
  use: (span: Tracer.Span) => Effect.Effect<A, E, R>,
  finish: (span: Tracer.Span, exit: Exit.Exit<A, E>) => void
): Effect.Effect<A, E, R> => {
  const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
  const made = fiber.currentTracer.span(
    span.name,
    span.parent,
    Context.empty(),
    [],
    clock.unsafeCurrentTimeNanos(),
    span.kind
  )
  return onExitSync(use(made), status, (exit) => {
    finish(made, exit)
    made.end(clock.unsafeCurrentTimeNanos(), exit)
  })
}
