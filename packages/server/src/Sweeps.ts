/**
 * The sweeps: expired previous webhook secrets and kept `Idempotency-Key` answers deleted in
 * bounded steps, by every process (each step locks what it deletes, so processes never collide).
 * @since 0.1.0
 */
import * as Availability from "@waybill/core/Availability"
import * as Idempotency from "@waybill/core/Idempotency"
import * as Metrics from "@waybill/core/Metrics"
import * as SecretRotation from "@waybill/webhooks/SecretRotation"
import type { WebhookRepository } from "@waybill/webhooks/WebhookRepository"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** How often the reference server sweeps: expired data stays in storage at most this long. @since 0.1.0 */
export const defaultInterval: Duration.DurationInput = "10 seconds"

/** One sweep of everything: how many of each kind were deleted. @since 0.1.0 */
export const run: Effect.Effect<
  { readonly previousSecrets: number; readonly idempotencyKeys: number },
  never,
  WebhookRepository | Idempotency.IdempotencyStore
> = Effect.map(
  Effect.all([SecretRotation.sweepExpiredSecrets, Idempotency.sweepExpired]),
  ([previousSecrets, idempotencyKeys]) => ({ previousSecrets, idempotencyKeys })
)

/** A sweep at start-up, then one every `interval`; a failed sweep is logged and the loop goes on. @since 0.1.0 */
export const layerLoop = (
  interval: Duration.DurationInput = defaultInterval
): Layer.Layer<never, never, WebhookRepository | Idempotency.IdempotencyStore> =>
  Layer.scopedDiscard(
    Availability.forkRepeated(
      Effect.tap(run, (swept) => {
        Metrics.recordRemoved("idempotency", swept.idempotencyKeys)
        return swept.previousSecrets + swept.idempotencyKeys > 0
          ? Effect.logDebug("Swept expired data").pipe(Effect.annotateLogs({ ...swept }))
          : Effect.void
      }),
      { loop: "the sweep loop", failure: "A sweep failed; retried next interval", interval }
    )
  )
