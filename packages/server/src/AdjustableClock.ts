/**
 * A running clock whose time can be set and moved, for driving the whole server through time.
 * Unlike `TestClock`, sleeps take real time: only the time read is shifted.
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** A clock that can be set and adjusted. @since 0.1.0 */
export interface AdjustableClock extends Clock.Clock {
  /** From now on the clock reads `epochMillis`, then runs on from there. */
  readonly setTime: (epochMillis: number) => Effect.Effect<void>
  /** Moves the clock forward (or back, with a negative duration) by `duration`. */
  readonly adjust: (duration: Duration.DurationInput) => Effect.Effect<void>
}

/** A clock reading the system time (or `startMillis` from now on) until it is set or adjusted. @since 0.1.0 */
export const make = (startMillis?: number): AdjustableClock => {
  const system = Clock.make()
  let offsetMillis = startMillis === undefined ? 0 : startMillis - system.unsafeCurrentTimeMillis()
  const millis = () => system.unsafeCurrentTimeMillis() + offsetMillis
  const nanos = () => system.unsafeCurrentTimeNanos() + BigInt(offsetMillis) * 1_000_000n
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: millis,
    currentTimeMillis: Effect.sync(millis),
    unsafeCurrentTimeNanos: nanos,
    currentTimeNanos: Effect.sync(nanos),
    sleep: (duration) => system.sleep(duration),
    setTime: (epochMillis) =>
      Effect.sync(() => {
        offsetMillis = epochMillis - system.unsafeCurrentTimeMillis()
      }),
    adjust: (duration) =>
      Effect.sync(() => {
        offsetMillis += Duration.toMillis(duration)
      })
  }
}
