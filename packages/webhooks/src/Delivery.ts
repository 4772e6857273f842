/**
 * Deliveries (contract §5): one per event × matching webhook, its `dlv_…` id every attempt's `X-Delivery-Id`.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** `pending` until an attempt succeeds or the retry fails too; `held` while its webhook is disabled. @since 0.1.0 */
export const DeliveryStatus = Schema.Literal("pending", "held", "succeeded", "failed")

/** @since 0.1.0 */
export type DeliveryStatus = typeof DeliveryStatus.Type

/**
 * Why an attempt failed: no HTTP response (`timeout`, `connect`, `dns`, `tls`, `ssrf`) or not a 2xx (`http`).
 * @since 0.1.0
 */
export const ErrorClass = Schema.Literal("timeout", "connect", "dns", "tls", "http", "ssrf")

/** @since 0.1.0 */
export type ErrorClass = typeof ErrorClass.Type

/** What started an attempt's cycle: fan-out (`automatic`), or a resend or replay (`manual`). @since 0.1.0 */
export const Trigger = Schema.Literal("automatic", "manual")

/** @since 0.1.0 */
export type Trigger = typeof Trigger.Type

/**
 * One attempt as the delivery log shows it (`statusCode` `null` without a response, `error` on success).
 * @since 0.1.0
 */
export const Attempt = Schema.Struct({
  at: Schema.Int,
  statusCode: Schema.NullOr(Schema.Int),
  durationMs: Schema.NonNegative,
  error: Schema.NullOr(ErrorClass),
  trigger: Trigger
}).annotations({ identifier: "DeliveryAttempt" })

/** @since 0.1.0 */
export type Attempt = typeof Attempt.Type

/** A delivery as `GET /webhooks/{id}/deliveries` lists it. @since 0.1.0 */
export const DeliveryLog = Schema.Struct({
  id: Schema.String,
  eventId: Schema.String,
  eventType: Schema.String,
  status: DeliveryStatus,
  orderingKey: Schema.NullOr(Schema.String).annotations({
    description: "The event's ordering key (contract §8, Ordering by key), or null without one"
  }),
  attempts: Schema.Array(Attempt)
}).annotations({ identifier: "Delivery" })

/** @since 0.1.0 */
export type DeliveryLog = typeof DeliveryLog.Type

/** Attempts per cycle: the first and exactly one retry (a resend or replay starts a new cycle). @since 0.1.0 */
export const maxAttempts = 2

/** Whether a status code is a success (any 2xx; redirects are failures, never followed). @since 0.1.0 */
export const isSuccess = (statusCode: number): boolean => statusCode >= 200 && statusCode <= 299
