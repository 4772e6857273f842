/**
 * Spans on hot paths, made only when a tracer is on: `Effect.withSpan` with the tracer off still makes
 * a no-op span and copies the fiber's whole context (docs/decisions/0089).
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

/** `Effect.withSpan(name, options)` while the fiber's tracer is on; nothing otherwise. @since 0.1.0 */
export const withSpan =
  (name: string, options?: Tracer.SpanOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime<A, E, R>((fiber) =>
      fiber.getFiberRef(FiberRef.currentTracerEnabled) ? Effect.withSpan(self, name, options) : self
    )

/**
 * Runs `self`, then `finish` with its exit, as `Effect.onExit` with `Effect.sync` does; where the fiber
 * already runs uninterruptibly (`status`), one match without `onExit`'s mask (docs/decisions/0095).
 * `finish` must not throw.
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
 * Runs `use(span)` at once in a span of the fiber's own tracer and clock; `finish` sees the span and
 * the exit just before it ends. Unlike `Effect.useSpan` it reads no span annotations or links, which
 * copies the fiber's references: for hot-path spans that have none.
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
