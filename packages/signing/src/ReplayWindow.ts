/**
 * The replay window both signature schemes apply (spec "Limits"): a signed timestamp is accepted
 * within `toleranceSeconds` of now, in either direction.
 * @since 0.2.0
 */
import { TimestampTooNew, TimestampTooOld } from "./VerificationError.js"

/**
 * The window `Hmac.verify`, `StandardWebhooks.verify` and the `Receiver` apply unless told
 * otherwise: 300 seconds (5 minutes) in both directions, the spec's window and that of the
 * official Standard Webhooks libraries.
 * @since 0.2.0
 */
export const defaultToleranceSeconds = 300

/**
 * The replay-window check of both signature schemes: `undefined` when the signed `timestamp` lies
 * within `toleranceSeconds` of `now` in either direction (bounds included), else the error that
 * says on which side it lies. Times in epoch seconds.
 * @since 0.2.0
 */
export const outsideWindow = (
  timestamp: number,
  now: number,
  toleranceSeconds: number
): TimestampTooOld | TimestampTooNew | undefined => {
  if (now - timestamp > toleranceSeconds) return new TimestampTooOld({ timestamp, now, toleranceSeconds })
  if (timestamp - now > toleranceSeconds) return new TimestampTooNew({ timestamp, now, toleranceSeconds })
  return undefined
}
