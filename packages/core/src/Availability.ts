/**
 * Whether the storage behind the ports can be reached: the storage adapter provides it, the HTTP
 * adapter answers 503 `unavailable` and `GET /health/ready` with it. Without a layer, storage counts
 * as always available.
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

/** @since 0.1.0 */
export class Availability extends Context.Tag("@waybill/core/Availability")<
  Availability,
  {
    /** Whether the storage answers now. Never fails, and answers within a few seconds. */
    readonly check: Effect.Effect<boolean>
    /** Whether a port's defect is an outage rather than a bug: answered 503, its transaction not committed. */
    readonly isOutage: (defect: unknown) => boolean
  }
>() {}

/** Storage that is always available: in-memory ports. @since 0.1.0 */
export const layerAlways: Layer.Layer<Availability> = Layer.succeed(Availability, {
  check: Effect.succeed(true),
  isOutage: () => false
})

/**
 * What a background loop says about its failures: a storage outage once when it starts and once when
 * it ends, as warnings without a stack; any other failure every time, as an error with its cause.
 * @since 0.1.0
 */
export interface LoopReporter {
  readonly failed: (cause: Cause.Cause<unknown>) => Effect.Effect<void>
  readonly succeeded: Effect.Effect<void>
}

/** A reporter for the loop named `loop`; `failure` is the message of a failure that is not an outage. @since 0.1.0 */
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
 * A forked background loop: `turn` at once, then every `interval` while the scope lasts; a failed
 * turn is reported through `loopReporter` and the loop goes on.
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
