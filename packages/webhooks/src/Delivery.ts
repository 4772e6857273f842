/**
 * Deliveries (contract §5): one per event × subscribed webhook whose filter matches, made at
 * fan-out with its `dlv_…` id (the `X-Delivery-Id` of every attempt). A delivery is `pending`
 * until an attempt succeeds (`succeeded`) or the retry fails too (`failed`); one made while its
 * webhook is disabled is `held` (nothing sent) until the webhook is enabled, then `pending`.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 */
export const DeliveryStatus = Schema.Literal("pending", "held", "succeeded", "failed")

/**
 * @since 0.1.0
 */
export type DeliveryStatus = typeof DeliveryStatus.Type

/**
 * Why an attempt failed: no HTTP response (`timeout`, `connect`, `dns`, `tls`, `ssrf`: the
 * target address is refused) or a response that is not 2xx, redirects included (`http`).
 * @since 0.1.0
 */
export const ErrorClass = Schema.Literal("timeout", "connect", "dns", "tls", "http", "ssrf")

/**
 * @since 0.1.0
 */
export type ErrorClass = typeof ErrorClass.Type

/**
 * What started an attempt's cycle: fan-out (`automatic`), or an operator's resend or replay
 * (`manual`). The retry of a cycle carries its cycle's trigger.
 * @since 0.1.0
 */
export const Trigger = Schema.Literal("automatic", "manual")

/**
 * @since 0.1.0
 */
export type Trigger = typeof Trigger.Type

/**
 * One attempt as the delivery log shows it: when (epoch seconds), the status code (`null` when
 * no response came), how long it took, the error class (`null` on success) and what started
 * its cycle.
 * @since 0.1.0
 */
export const Attempt = Schema.Struct({
  at: Schema.Int,
  statusCode: Schema.NullOr(Schema.Int),
  durationMs: Schema.NonNegative,
  error: Schema.NullOr(ErrorClass),
  trigger: Trigger
}).annotations({ identifier: "DeliveryAttempt" })

/**
 * @since 0.1.0
 */
export type Attempt = typeof Attempt.Type

/**
 * A delivery as `GET /webhooks/{id}/deliveries` lists it.
 * @since 0.1.0
 */
export const DeliveryLog = Schema.Struct({
  id: Schema.String,
  eventId: Schema.String,
  eventType: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Array(Attempt)
}).annotations({ identifier: "Delivery" })

/**
 * @since 0.1.0
 */
export type DeliveryLog = typeof DeliveryLog.Type

/**
 * Attempts per cycle: the first and exactly one retry. A delivery has one automatic cycle and
 * one more per resend or replay; its attempts are numbered on across cycles.
 * @since 0.1.0
 */
export const maxAttempts = 2

/**
 * Whether a status code is a success (any 2xx; redirects are failures, never followed).
 * @since 0.1.0
 */
export const isSuccess = (statusCode: number): boolean => statusCode >= 200 && statusCode <= 299
