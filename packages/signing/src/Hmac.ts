/**
 * HMAC-SHA256 webhook signatures (spec "Authentication", contract §5): the signer the service
 * calls for every delivery attempt, and the verifier a receiver runs on what arrives. The signed
 * string is `"<timestamp>.<raw body>"`: the timestamp exactly as sent in `X-Signature-Timestamp`
 * (epoch seconds) and the body bytes exactly as sent (a string is taken as UTF-8). The signature
 * is the lowercase hexadecimal HMAC-SHA256 of it under the shared secret.
 *
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"
import { createHmac, type Hmac as NodeHmac, timingSafeEqual } from "node:crypto"
import * as Either from "effect/Either"
import type * as Redacted from "effect/Redacted"
import { keyOf } from "./internal/crypto.js"
import type * as Internal from "./internal/headers.js"
import { single } from "./internal/headers.js"
import {
  MalformedHeader,
  type SignatureError,
  SignatureMismatch,
  TimestampTooNew,
  TimestampTooOld,
  UnsupportedAlgorithm
} from "./VerificationError.js"

/**
 * The value of `X-Signature-Algorithm`.
 *
 * @since 0.1.0
 * @category constants
 */
export const algorithm = "hmac-sha256"

/**
 * The names of the three signature headers, spelled as the service sends them (HTTP header
 * names are case-insensitive; the verifier matches them in any case).
 *
 * @since 0.1.0
 * @category constants
 */
export const headerNames = {
  algorithm: "X-Signature-Algorithm",
  timestamp: "X-Signature-Timestamp",
  signature: "X-Signature"
} as const

/**
 * The replay window a receiver applies unless told otherwise: 5 minutes, in both directions
 * (spec "Limits").
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultToleranceSeconds = 300

/**
 * A shared secret: text (taken as UTF-8), raw key bytes, or a `Redacted` string so it never
 * shows up in logs by accident.
 *
 * @since 0.1.0
 * @category models
 */
export type Secret = string | Uint8Array | Redacted.Redacted<string>

/**
 * The body exactly as sent on the wire: bytes, or a string taken as UTF-8.
 *
 * @since 0.1.0
 * @category models
 */
export type RawBody = string | Uint8Array

/**
 * Request headers: Fetch `Headers`, Node's `IncomingHttpHeaders`, or a plain record (names
 * matched case-insensitively).
 *
 * @since 0.1.0
 * @category models
 */
export type HeadersInput = Internal.HeadersInput

const checkTimestamp = (timestamp: number): void => {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`The signature timestamp must be a non-negative integer of epoch seconds, got ${timestamp}`)
  }
}

const mac = (key: string | Uint8Array, timestamp: string, rawBody: RawBody): NodeHmac => {
  const hmac = createHmac("sha256", key)
  // One `update` for the common string case: concatenating is cheaper than a second native call.
  return typeof rawBody === "string"
    ? hmac.update(`${timestamp}.${rawBody}`)
    : hmac.update(`${timestamp}.`).update(rawBody)
}

/**
 * The lowercase hexadecimal HMAC-SHA256 of `"<timestamp>.<rawBody>"` under `secret`.
 *
 * Synchronous, for the dispatcher's hot path. Throws a `RangeError` (a programming error, not a
 * delivery failure) for an empty secret or a timestamp that is not a non-negative integer.
 *
 * @since 0.1.0
 * @category signing
 */
export const sign = (secret: Secret, timestamp: number, rawBody: RawBody): string => {
  checkTimestamp(timestamp)
  return mac(keyOf(secret), String(timestamp), rawBody).digest("hex")
}

// A type literal rather than an interface, so it is assignable to `Record<string, string>`
// (Fetch `HeadersInit`, Node's `OutgoingHttpHeaders`).
/**
 * The headers an HMAC-authenticated delivery carries.
 *
 * @since 0.1.0
 * @category models
 */
export type SignatureHeaders = {
  readonly "X-Signature-Algorithm": typeof algorithm
  readonly "X-Signature-Timestamp": string
  readonly "X-Signature": string
}

/**
 * The three signature headers for one delivery attempt, ready to merge into a request.
 *
 * @since 0.1.0
 * @category signing
 */
export const signatureHeaders = (secret: Secret, timestamp: number, rawBody: RawBody): SignatureHeaders => ({
  "X-Signature-Algorithm": algorithm,
  "X-Signature-Timestamp": String(timestamp),
  "X-Signature": sign(secret, timestamp, rawBody)
})

/**
 * What `verify` needs.
 *
 * @since 0.1.0
 * @category models
 */
export interface VerifyOptions {
  readonly secret: Secret
  readonly headers: HeadersInput
  /** The body exactly as received, before any JSON parsing. */
  readonly rawBody: RawBody
  /** The receiver's current time in epoch seconds. */
  readonly now: number
  /** The replay window in seconds, applied in both directions; 300 when omitted. */
  readonly toleranceSeconds?: number | undefined
}

/**
 * A delivery whose signature held.
 *
 * @since 0.1.0
 * @category models
 */
export interface Verified {
  readonly method: "hmac"
  /** The signed timestamp, epoch seconds. */
  readonly timestamp: number
}

// 1 to 15 ASCII digits: any epoch second a safe integer can hold. A loop, not a regular
// expression: this runs for every delivery and the regex costs more than the rest together.
const isTimestamp = (text: string): boolean => {
  if (text.length === 0 || text.length > 15) return false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 48 || code > 57) return false
  }
  return true
}

/**
 * Checks an HMAC-signed delivery: the three headers are present and well-formed, the algorithm
 * is `hmac-sha256`, the signature matches (compared in constant time), and the timestamp lies
 * within `toleranceSeconds` of `now` in either direction (bounds included).
 *
 * The signature is checked before the timestamp, so `TimestampTooOld` / `TimestampTooNew` mean
 * "genuinely signed, but outside the window" (a replay or a clock problem), while a forged
 * request always gets `SignatureMismatch`. The hex digits of `X-Signature` are accepted in
 * either case.
 *
 * Throws a `RangeError` for an empty secret, a non-finite `now` or a negative tolerance: those
 * are configuration errors, not properties of the request.
 *
 * @since 0.1.0
 * @category verifying
 */
export const verify = (options: VerifyOptions): Either.Either<Verified, SignatureError> => {
  const key = keyOf(options.secret)
  const tolerance = options.toleranceSeconds ?? defaultToleranceSeconds
  if (!Number.isFinite(options.now)) throw new RangeError(`now must be finite epoch seconds, got ${options.now}`)
  if (!(tolerance >= 0)) throw new RangeError(`toleranceSeconds must be non-negative, got ${tolerance}`)

  const headers = options.headers
  // X-Signature first: when all three are absent (the most common misconfiguration, e.g. the
  // webhook uses Basic), this is the header worth naming.
  const signature = single(headers, "x-signature", headerNames.signature)
  if (typeof signature !== "string") return Either.left(signature)
  const declared = single(headers, "x-signature-algorithm", headerNames.algorithm)
  if (typeof declared !== "string") return Either.left(declared)
  if (declared.toLowerCase() !== algorithm) {
    return Either.left(new UnsupportedAlgorithm({ algorithm: declared.slice(0, 64) }))
  }
  const timestampText = single(headers, "x-signature-timestamp", headerNames.timestamp)
  if (typeof timestampText !== "string") return Either.left(timestampText)
  if (!isTimestamp(timestampText)) {
    return Either.left(
      new MalformedHeader({ header: headerNames.timestamp, reason: "expected an integer of epoch seconds" })
    )
  }
  // Node's hex decoder stops at the first pair that is not hex, so 64 characters decoding to
  // 32 bytes means 64 hex digits, in either case.
  const given = signature.length === 64 ? Buffer.from(signature, "hex") : undefined
  if (given === undefined || given.length !== 32) {
    return Either.left(new MalformedHeader({ header: headerNames.signature, reason: "expected 64 hexadecimal digits" }))
  }

  // The header text, not a re-formatted number, is what the sender signed.
  const expected = mac(key, timestampText, options.rawBody).digest()
  if (!timingSafeEqual(expected, given)) return Either.left(new SignatureMismatch())

  const timestamp = Number(timestampText)
  const now = options.now
  if (now - timestamp > tolerance) {
    return Either.left(new TimestampTooOld({ timestamp, now, toleranceSeconds: tolerance }))
  }
  if (timestamp - now > tolerance) {
    return Either.left(new TimestampTooNew({ timestamp, now, toleranceSeconds: tolerance }))
  }
  return Either.right({ method: "hmac", timestamp })
}
