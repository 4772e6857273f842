/**
 * HMAC-SHA256 webhook signatures, the service's signer and the receiver's verifier: the lowercase hex
 * HMAC-SHA256 of `"<timestamp>.<raw body>"` under the shared secret, both exactly as sent.
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

/** The value of `X-Signature-Algorithm`. @since 0.1.0 */
export const algorithm = "hmac-sha256"

/** The names of the three signature headers as the service sends them; the verifier matches any case. @since 0.1.0 */
export const headerNames = {
  algorithm: "X-Signature-Algorithm",
  timestamp: "X-Signature-Timestamp",
  signature: "X-Signature"
} as const

/** A shared secret: text (taken as UTF-8), raw key bytes, or a `Redacted` string. @since 0.1.0 */
export type Secret = string | Uint8Array | Redacted.Redacted<string>

/** The body exactly as sent on the wire: bytes, or a string taken as UTF-8. @since 0.1.0 */
export type RawBody = string | Uint8Array

/** Request headers: Fetch `Headers`, Node's `IncomingHttpHeaders` or a plain record, names in any case. @since 0.1.0 */
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

/** One secret or several: the service signs with each (a rotation's overlap), a receiver accepts any. @since 0.1.0 */
export type Secrets = Secret | ReadonlyArray<Secret>

/**
 * The most signatures `verify` reads from one `X-Signature`; more is `MalformedHeader`, so a request
 * cannot make a receiver compute without bound.
 * @since 0.1.0
 */
export const maxSignatures = 8

/** The secrets of a `Secrets` value, in order (a `Uint8Array` is one secret, not a list). @since 0.1.0 */
export const secretList = <S>(secrets: S | ReadonlyArray<S>): ReadonlyArray<S> =>
  Array.isArray(secrets) ? (secrets as ReadonlyArray<S>) : [secrets as S]

/**
 * The lowercase hex HMAC-SHA256 of `"<timestamp>.<rawBody>"` under `secret`. Throws a `RangeError`
 * for an empty secret or a timestamp that is not a non-negative integer.
 * @since 0.1.0
 */
export const sign = (secret: Secret, timestamp: number, rawBody: RawBody): string => {
  checkTimestamp(timestamp)
  return mac(keyOf(secret), String(timestamp), rawBody).digest("hex")
}

// A type literal rather than an interface, so it is assignable to `Record<string, string>`.
/** The headers an HMAC-authenticated delivery carries. @since 0.1.0 */
export type SignatureHeaders = {
  readonly "X-Signature-Algorithm": typeof algorithm
  readonly "X-Signature-Timestamp": string
  readonly "X-Signature": string
}

/**
 * The three signature headers for one attempt. With several secrets (the new one first),
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

/** What `verify` needs. @since 0.1.0 */
export interface VerifyOptions {
  /** The shared secret, or several: a signature made with any of them passes. */
  readonly secret: Secrets
  readonly headers: HeadersInput
  /** The body exactly as received, before any JSON parsing. */
  readonly rawBody: RawBody
  /** The receiver's current time in epoch seconds. */
  readonly now: number
  /** The replay window in seconds, applied in both directions; 300 when omitted. */
  readonly toleranceSeconds?: number | undefined
}

/** A delivery whose signature held. @since 0.1.0 */
export interface Verified {
  readonly method: "hmac"
  /** The signed timestamp, epoch seconds. */
  readonly timestamp: number
}

// 1 to 15 ASCII digits, by a loop: a regular expression would cost more than the rest of `verify`.
const isTimestamp = (text: string): boolean => {
  if (text.length === 0 || text.length > 15) return false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 48 || code > 57) return false
  }
  return true
}

const signaturesOf = (value: string): ReadonlyArray<Buffer> | undefined => {
  // Node's hex decoder stops at the first pair that is not hex: 32 bytes from 64 characters are 64 hex digits.
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
 * Checks an HMAC-signed delivery: the headers, any signature made with any secret (constant time),
 * then the replay window, so a forgery is always `SignatureMismatch`. Throws a `RangeError` for an
 * empty secret, a non-finite `now` or a negative tolerance.
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
  // X-Signature first: when all three are absent (e.g. the webhook uses Basic), it is the one to name.
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
