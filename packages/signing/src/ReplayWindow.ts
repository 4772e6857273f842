/**
 * The replay window both signature schemes apply: a signed timestamp is accepted within
 * `toleranceSeconds` of now, in either direction.
 * @since 0.2.0
 */
import { TimestampTooNew, TimestampTooOld } from "./VerificationError.js"

/**
 * The window every verifier applies unless told otherwise: 300 seconds, as the Standard Webhooks libraries.
 * @since 0.2.0
 */
export const defaultToleranceSeconds = 300

/**
 * `undefined` when `timestamp` lies within `toleranceSeconds` of `now` (bounds included), else the
 * error that says on which side. Times in epoch seconds.
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
