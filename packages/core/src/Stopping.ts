/**
 * Whether the process is stopping (contract §8, "Shutdown"): from the first moment of a stop
 * `GET /health/ready` answers 503, so an orchestrator sends no more traffic, while requests already
 * received are still answered and attempts in flight finish.
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** @since 0.3.0 */
export class Stopping extends Context.Tag("@waybill/core/Stopping")<
  Stopping,
  {
    readonly isStopping: () => boolean
    /** The stop has begun; it cannot be undone. */
    readonly begin: Effect.Effect<void>
  }
>() {}

/** A flag, down until `begin`. @since 0.3.0 */
export const layer: Layer.Layer<Stopping> = Layer.sync(Stopping, () => {
  let stopping = false
  return {
    isStopping: () => stopping,
    begin: Effect.sync(() => {
      stopping = true
    })
  }
})

/**
 * Raises the flag when its scope closes: built after everything else, its finalizer is the
 * first to run in a stop.
 * @since 0.3.0
 */
export const layerOnStop: Layer.Layer<never, never, Stopping> = Layer.scopedDiscard(
  Effect.flatMap(Stopping, (stopping) => Effect.addFinalizer(() => stopping.begin))
)
