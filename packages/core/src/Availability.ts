/**
 * Whether the storage behind the ports can be reached (contract §1: 503 `unavailable` while the
 * database cannot be reached; §7: `GET /health/ready`). Declared here because both sides need
 * it: the storage adapter knows what an outage looks like (`@waybill/store-pg` provides it with
 * its database), the HTTP adapter answers with it. Without a layer, storage counts as always
 * available (in-memory ports cannot be unreachable).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * @since 0.1.0
 * @category tags
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
 *
 * @since 0.1.0
 * @category layers
 */
export const layerAlways: Layer.Layer<Availability> = Layer.succeed(Availability, {
  check: Effect.succeed(true),
  isOutage: () => false
})
