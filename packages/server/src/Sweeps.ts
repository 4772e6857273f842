/**
 * The sweeps: what storage keeps only for a while, deleted once its time is up, in bounded
 * steps, by every process (each step locks what it deletes, so processes never collide):
 * previous webhook secrets whose rotation overlap has ended, and the answers kept for
 * `Idempotency-Key`s once their 24 hours are up (contract §8).
 * @since 0.1.0
 */
import * as Availability from "@waybill/core/Availability"
import * as Idempotency from "@waybill/core/Idempotency"
import * as SecretRotation from "@waybill/webhooks/SecretRotation"
import type { WebhookRepository } from "@waybill/webhooks/WebhookRepository"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * How often the reference server sweeps: every 10 seconds, so an expired previous secret
 * stays in storage at most that long after its overlap (attempts stop using it at once); kept
 * answers of `Idempotency-Key`s likewise after their 24 hours.
 * @since 0.1.0
 */
export const defaultInterval: Duration.DurationInput = "10 seconds"

/**
 * One sweep of everything: how many of each kind were deleted.
 * @since 0.1.0
 */
export const run: Effect.Effect<
  { readonly previousSecrets: number; readonly idempotencyKeys: number },
  never,
  WebhookRepository | Idempotency.IdempotencyStore
> = Effect.map(
  Effect.all([SecretRotation.sweepExpiredSecrets, Idempotency.sweepExpired]),
  ([previousSecrets, idempotencyKeys]) => ({ previousSecrets, idempotencyKeys })
)

/**
 * The loop: a sweep at start-up, then one every `interval`. A sweep that fails (the database is
 * unreachable) is logged and the loop goes on.
 * @since 0.1.0
 */
export const layerLoop = (
  interval: Duration.DurationInput = defaultInterval
): Layer.Layer<never, never, WebhookRepository | Idempotency.IdempotencyStore> =>
  Layer.scopedDiscard(
    Availability.forkRepeated(
      Effect.tap(run, (swept) =>
        swept.previousSecrets + swept.idempotencyKeys > 0
          ? Effect.logDebug("Swept expired data").pipe(Effect.annotateLogs({ ...swept }))
          : Effect.void
      ),
      { loop: "the sweep loop", failure: "A sweep failed; retried next interval", interval }
    )
  )
