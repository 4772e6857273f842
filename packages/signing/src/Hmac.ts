/**
 * HMAC-SHA256 webhook signatures (spec "Authentication", contract §5): the signer the service
 * calls for every delivery attempt, and the verifier a receiver runs on what arrives. The signed
 * string is `"<timestamp>.<raw body>"`: the timestamp exactly as sent in `X-Signature-Timestamp`
 * (epoch seconds) and the body bytes exactly as sent (a string is taken as UTF-8). The signature
 * is the lowercase hexadecimal HMAC-SHA256 of it under the shared secret.
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"
import { createHmac, type Hmac as NodeHmac, timingSafeEqual } from "node:crypto"
import * as Either from "effect/Either"
import type * as Redacted from "effect/Redacted"
import { keyOf } from "./internal/crypto.js"
import type * as Internal from "./internal/headers.js"
import { single } from "./internal/headers.js"
import * as ReplayWindow from "./ReplayWindow.js"
import { MalformedHeader, type SignatureError, SignatureMismatch, UnsupportedAlgorithm } from "./VerificationError.js"

/**
 * The value of `X-Signature-Algorithm`.
 * @since 0.1.0
 */
export const algorithm = "hmac-sha256"

/**
 * The names of the three signature headers, spelled as the service sends them (HTTP header
 * names are case-insensitive; the verifier matches them in any case).
 * @since 0.1.0
 */
export const headerNames = {
  algorithm: "X-Signature-Algorithm",
  timestamp: "X-Signature-Timestamp",
  signature: "X-Signature"
} as const

/**
 * A shared secret: text (taken as UTF-8), raw key bytes, or a `Redacted` string so it never
 * shows up in logs by accident.
 * @since 0.1.0
 */
export type Secret = string | Uint8Array | Redacted.Redacted<string>

/**
 * The body exactly as sent on the wire: bytes, or a string taken as UTF-8.
 * @since 0.1.0
 */
export type RawBody = string | Uint8Array

/**
 * Request headers: Fetch `Headers`, Node's `IncomingHttpHeaders`, or a plain record (names
 * matched case-insensitively).
 * @since 0.1.0
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
 * One secret or several. A service signs with every secret it is given (during a secret
 * rotation, the new one and the previous one); a receiver accepts a signature made with any
 * of its secrets (while it moves from one to the next).
 * @since 0.1.0
 */
export type Secrets = Secret | ReadonlyArray<Secret>

/**
 * The most signatures `verify` reads from one `X-Signature` (the service sends one, or two
 * during a secret rotation); more is `MalformedHeader`, so a request cannot make a receiver
 * compute without bound.
 * @since 0.1.0
 */
export const maxSignatures = 8

/**
 * The secrets of a `Secrets` value, in order: one secret is a list of one. (A `Uint8Array`
 * secret is one secret, not a list.)
 * @since 0.1.0
 */
export const secretList = <S>(secrets: S | ReadonlyArray<S>): ReadonlyArray<S> =>
  Array.isArray(secrets) ? (secrets as ReadonlyArray<S>) : [secrets as S]

/**
 * The lowercase hexadecimal HMAC-SHA256 of `"<timestamp>.<rawBody>"` under `secret`.
 *
 * Synchronous, for the dispatcher's hot path. Throws a `RangeError` (a programming error, not a
 * delivery failure) for an empty secret or a timestamp that is not a non-negative integer.
 * @since 0.1.0
 */
export const sign = (secret: Secret, timestamp: number, rawBody: RawBody): string => {
  checkTimestamp(timestamp)
  return mac(keyOf(secret), String(timestamp), rawBody).digest("hex")
}

// A type literal rather than an interface, so it is assignable to `Record<string, string>`
// (Fetch `HeadersInit`, Node's `OutgoingHttpHeaders`).
/**
 * The headers an HMAC-authenticated delivery carries.
 * @since 0.1.0
 */
export type SignatureHeaders = {
  readonly "X-Signature-Algorithm": typeof algorithm
  readonly "X-Signature-Timestamp": string
  readonly "X-Signature": string
}

/**
 * The three signature headers for one delivery attempt, ready to merge into a request. With
 * several secrets (a rotation's overlap: the new one first, then the previous one),
 * `X-Signature` carries one signature per secret, in their order, separated by `", "`.
 * @since 0.1.0
 */
export const signatureHeaders = (secrets: Secrets, timestamp: number, rawBody: RawBody): SignatureHeaders => {
  const list = secretList(secrets)
  if (list.length === 0) throw new RangeError("At least one HMAC secret is needed to sign")
  return {
    "X-Signature-Algorithm": algorithm,
    "X-Signature-Timestamp": String(timestamp),
    "X-Signature":
      list.length === 1
        ? sign(list[0]!, timestamp, rawBody)
        : list.map((secret) => sign(secret, timestamp, rawBody)).join(", ")
  }
}

/**
 * What `verify` needs.
 * @since 0.1.0
 */
export interface VerifyOptions {
  /**
   * The shared secret, or several (a receiver moving from one secret to the next): a
   * signature made with any of them passes.
   */
  readonly secret: Secrets
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
 * @since 0.1.0
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

// The 32-byte signatures of an `X-Signature` value: one, or several separated by commas (a
// rotation's overlap), each 64 hex digits in either case; `undefined` when any is not.
const signaturesOf = (value: string): ReadonlyArray<Buffer> | undefined => {
  // Node's hex decoder stops at the first pair that is not hex, so 64 characters decoding to
  // 32 bytes means 64 hex digits, in either case.
  const decode = (text: string) => {
    const bytes = text.length === 64 ? Buffer.from(text, "hex") : undefined
    return bytes !== undefined && bytes.length === 32 ? bytes : undefined
  }
  if (value.length === 64) {
    const one = decode(value)
    return one === undefined ? undefined : [one]
  }
  const parts = value.split(",")
  if (parts.length > maxSignatures) return undefined
  const signatures: Array<Buffer> = []
  for (const part of parts) {
    const bytes = decode(part.trim())
    if (bytes === undefined) return undefined
    signatures.push(bytes)
  }
  return signatures
}

/**
 * Checks an HMAC-signed delivery: the three headers are present and well-formed, the algorithm
 * is `hmac-sha256`, a signature matches (compared in constant time), and the timestamp lies
 * within `toleranceSeconds` of `now` in either direction (bounds included).
 *
 * `X-Signature` may carry several signatures separated by commas (the service signs with both
 * the new and the previous secret while a rotation's overlap runs), and `secret` may be several
 * secrets: the delivery passes when any signature was made with any of the secrets.
 *
 * The signature is checked before the timestamp, so `TimestampTooOld` / `TimestampTooNew` mean
 * "genuinely signed, but outside the window" (a replay or a clock problem), while a forged
 * request always gets `SignatureMismatch`. The hex digits of `X-Signature` are accepted in
 * either case.
 *
 * Throws a `RangeError` for an empty secret, a non-finite `now` or a negative tolerance: those
 * are configuration errors, not properties of the request.
 * @since 0.1.0
 */
export const verify = (options: VerifyOptions): Either.Either<Verified, SignatureError> => {
  const secrets = secretList(options.secret)
  if (secrets.length === 0) throw new RangeError("At least one HMAC secret is needed to verify")
  const keys = secrets.map(keyOf)
  const tolerance = options.toleranceSeconds ?? ReplayWindow.defaultToleranceSeconds
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
  const given = signaturesOf(signature)
  if (given === undefined) {
    return Either.left(
      new MalformedHeader({
        header: headerNames.signature,
        reason: `expected 64 hexadecimal digits (at most ${maxSignatures} signatures, separated by commas)`
      })
    )
  }

  let matched = false
  for (const key of keys) {
    // The header text, not a re-formatted number, is what the sender signed.
    const expected = mac(key, timestampText, options.rawBody).digest()
    for (const candidate of given) if (timingSafeEqual(expected, candidate)) matched = true
  }
  if (!matched) return Either.left(new SignatureMismatch())

  const timestamp = Number(timestampText)
  const outside = ReplayWindow.outsideWindow(timestamp, options.now, tolerance)
  return outside === undefined ? Either.right({ method: "hmac", timestamp }) : Either.left(outside)
}
