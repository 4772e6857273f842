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
import * as FiberRef from "effect/FiberRef"
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
