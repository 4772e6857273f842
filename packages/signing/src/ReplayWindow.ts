import { TimestampTooNew, TimestampTooOld } from "../VerificationError.js"

/**
 * The replay window both signature schemes apply unless told otherwise: 300 seconds (5 minutes)
 * in both directions, the spec's window ("Limits") and that of the official Standard Webhooks
 * libraries. `outsideWindow` is given the window the caller chose, this one by default.
 */
export const defaultToleranceSeconds = 300

/**
 * The replay-window check of both signature schemes: `undefined` when the signed `timestamp` lies
 * within `toleranceSeconds` of `now` in either direction (bounds included), else the error that
 * says on which side it lies.
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
