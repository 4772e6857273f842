/**
 * Whether the storage behind the ports can be reached (contract §1: 503 `unavailable` while the
 * database cannot be reached; §7: `GET /health/ready`). Declared here because both sides need
 * it: the storage adapter knows what an outage looks like (`@waybill/store-pg` provides it with
 * its database), the HTTP adapter answers with it. Without a layer, storage counts as always
 * available (in-memory ports cannot be unreachable).
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

/**
 * @since 0.1.0
 */
export class Availability extends Context.Tag("@waybill/core/Availability")<
  Availability,
  {
    /** Whether the storage answers now. Never fails, and answers within a few seconds. */
    readonly check: Effect.Effect<boolean>
    /**
     * Whether a defect raised by a port means the storage could not be reached (connection
     * refused, reset or lost, the server shutting down), rather than a bug: such a request is
     * answered 503 with `Retry-After`, and its transaction did not commit.
     */
    readonly isOutage: (defect: unknown) => boolean
  }
>() {}

/**
 * Storage that is always available: in-memory ports.
 * @since 0.1.0
 */
export const layerAlways: Layer.Layer<Availability> = Layer.succeed(Availability, {
  check: Effect.succeed(true),
  isOutage: () => false
})

/**
 * What a background loop (the dispatcher's, the tour generator's) says about its failures: an
 * outage of the storage once when the loop first meets it (a warning naming the loop, without a
 * stack) and once when the loop runs again, however many turns fail meanwhile; any other failure
 * every time, as an error with its cause. Without an `Availability` layer every failure is of
 * the second kind.
 * @since 0.1.0
 */
export interface LoopReporter {
  /** Reports a failed turn of the loop. */
  readonly failed: (cause: Cause.Cause<unknown>) => Effect.Effect<void>
  /** Reports a turn that went through (says the loop runs again if it had met an outage). */
  readonly succeeded: Effect.Effect<void>
}

/**
 * A reporter for the loop named `loop` (e.g. "the dispatcher's delivery loop"); `failure` is
 * the message of a failure that is not an outage.
 * @since 0.1.0
 */
export const loopReporter = (loop: string, failure: string): Effect.Effect<LoopReporter> =>
  Effect.map(Effect.serviceOption(Availability), (availability) => {
    // When the loop met the current outage; undefined while it runs.
    let since: number | undefined
    const isOutage = (cause: Cause.Cause<unknown>) =>
      Option.isSome(availability) && availability.value.isOutage(Cause.squash(cause))
    return {
      failed: (cause) =>
        Effect.suspend(() => {
          if (!isOutage(cause)) return Effect.logError(failure, cause)
          if (since !== undefined) return Effect.void
          since = Date.now()
          const squashed = Cause.squash(cause)
          return Effect.logWarning(`The database cannot be reached: ${loop} waits until it is back`).pipe(
            Effect.annotateLogs({ cause: squashed instanceof Error ? squashed.message : String(squashed) })
          )
        }),
      succeeded: Effect.suspend(() => {
        if (since === undefined) return Effect.void
        const seconds = ((Date.now() - since) / 1000).toFixed(1)
        since = undefined
        return Effect.logInfo(`The database is back: ${loop} runs again (it waited ${seconds} s)`)
      })
    }
  })

/**
 * A background loop: `turn` at once, then again every `interval` for as long as the scope
 * lasts, forked; a turn that fails is said through `loopReporter(loop, failure)` and the loop
 * goes on.
 * @since 0.1.0
 */
export const forkRepeated = <A, E, R>(
  turn: Effect.Effect<A, E, R>,
  options: { readonly loop: string; readonly failure: string; readonly interval: Duration.DurationInput }
): Effect.Effect<void, never, R | Scope.Scope> =>
  Effect.flatMap(loopReporter(options.loop, options.failure), (reporter) =>
    turn.pipe(
      Effect.zipLeft(reporter.succeeded),
      Effect.catchAllCause(reporter.failed),
      Effect.repeat(Schedule.spaced(options.interval)),
      Effect.forkScoped,
      Effect.asVoid
    )
  )
