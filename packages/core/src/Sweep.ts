/**
 * Maintenance sweeps: what storage keeps only for a while, deleted once its time is up, in
 * bounded steps (one statement each) so that no sweep locks many rows at once.
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/**
 * Runs `step(now, batchSize)` (now in epoch seconds, by the `Clock`) until a step deletes fewer
 * than `batchSize`, yielding between steps; answers how many were deleted in all.
 * @since 0.1.0
 */
export const inSteps = <E, R>(
  batchSize: number,
  step: (now: number, limit: number) => Effect.Effect<number, E, R>
): Effect.Effect<number, E, R> =>
  Effect.gen(function* () {
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    let deleted = 0
    for (;;) {
      const count = yield* step(now, batchSize)
      deleted += count
      if (count < batchSize) return deleted
      yield* Effect.yieldNow()
    }
  })
