/**
 * The Standard Webhooks signature scheme (https://www.standardwebhooks.com): `webhook-signature:
 * v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, the key decoded from the secret after `whsec_`.
 * @since 0.1.0
 */
import { createHmac, type Hmac, timingSafeEqual } from "node:crypto"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import type * as Internal from "./internal/headers.js"
import { single } from "./internal/headers.js"
import * as ReplayWindow from "./ReplayWindow.js"
import { MalformedHeader, type SignatureError, SignatureMismatch } from "./VerificationError.js"

/** The prefix of a Standard Webhooks secret. @since 0.1.0 */
export const secretPrefix = "whsec_"

/** The key lengths (bytes, after base64 decoding) a secret may have. @since 0.1.0 */
export const keyBytes = { min: 24, max: 64 } as const

/** The header names, as sent (lower case, as the specification spells them). @since 0.1.0 */
export const headerNames = {
  id: "webhook-id",
  timestamp: "webhook-timestamp",
  signature: "webhook-signature"
} as const

/** A secret: `whsec_<base64>` as text or `Redacted`. @since 0.1.0 */
export type Secret = string | Redacted.Redacted<string>

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

// `atob`, not `Buffer`: the registration rules that use this are bundled into the operator console.
const decodeBase64 = (encoded: string): Uint8Array | undefined => {
  if (encoded.length === 0 || encoded.length % 4 !== 0 || !BASE64.test(encoded)) return undefined
  try {
    return Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0))
  } catch {
    return undefined
  }
}

/** The key bytes of a secret, if it is `whsec_` followed by standard base64 of 24 to 64 bytes. @since 0.1.0 */
export const keyOf = (secret: Secret): Uint8Array | undefined => {
  const text = Redacted.isRedacted(secret) ? Redacted.value(secret) : secret
  if (!text.startsWith(secretPrefix)) return undefined
  const key = decodeBase64(text.slice(secretPrefix.length))
  return key !== undefined && key.length >= keyBytes.min && key.length <= keyBytes.max ? key : undefined
}

/** Whether a secret is a valid Standard Webhooks secret (see `keyOf`). @since 0.1.0 */
export const isSecret = (secret: Secret): boolean => keyOf(secret) !== undefined

const requireKey = (secret: Secret): Uint8Array => {
  const key = keyOf(secret)
  // A configuration error: thrown, without the secret in the message.
  if (key === undefined) {
    throw new RangeError(
      `A Standard Webhooks secret is ${secretPrefix} followed by base64 of ${keyBytes.min} to ${keyBytes.max} bytes`
    )
  }
  return key
}

const mac = (key: Uint8Array, id: string, timestamp: string, body: string | Uint8Array): Hmac => {
  const hmac = createHmac("sha256", key)
  return typeof body === "string"
    ? hmac.update(`${id}.${timestamp}.${body}`)
    : hmac.update(`${id}.${timestamp}.`).update(body)
}

/** The `webhook-signature` value for one message: `v1,<base64>`. @since 0.1.0 */
export const sign = (secret: Secret, id: string, timestamp: number, body: string | Uint8Array): string =>
  `v1,${mac(requireKey(secret), id, String(timestamp), body).digest("base64")}`

/** The three headers of one attempt. @since 0.1.0 */
export type SignatureHeaders = {
  readonly "webhook-id": string
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
}

/** One secret or several (see `Hmac.Secrets`). @since 0.1.0 */
export type Secrets = Secret | ReadonlyArray<Secret>

/** The most entries `verify` reads from one `webhook-signature`; more is `MalformedHeader`. @since 0.1.0 */
export const maxSignatures = 8

const secretList = (secrets: Secrets): ReadonlyArray<Secret> =>
  Array.isArray(secrets) ? (secrets as ReadonlyArray<Secret>) : [secrets as Secret]

/**
 * The headers for one attempt of the message `id` at `timestamp` (epoch seconds). With several secrets
 * (the new one first), `webhook-signature` holds one `v1,` signature per secret, separated by spaces.
 * @since 0.1.0
 */
export const signatureHeaders = (
  secrets: Secrets,
  id: string,
  timestamp: number,
  body: string | Uint8Array
): SignatureHeaders => {
  const list = secretList(secrets)
  if (list.length === 0) throw new RangeError("At least one Standard Webhooks secret is needed to sign")
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": list.map((secret) => sign(secret, id, timestamp, body)).join(" ")
  }
}

/** What `verify` needs: the secret, the headers, the raw body and the receiver's clock (epoch seconds). @since 0.1.0 */
export interface VerifyOptions {
  /** The secret, or several (a receiver moving to a new one): any of them may have signed. */
  readonly secret: Secrets
  readonly headers: Internal.HeadersInput
  readonly rawBody: string | Uint8Array
  readonly now: number
  /** The replay window in seconds, both directions; 300 when omitted. */
  readonly toleranceSeconds?: number | undefined
}

/** A verified message: its id (Waybill's delivery id) and signed timestamp. @since 0.1.0 */
export interface Verified {
  readonly method: "standard-webhooks"
  readonly id: string
  readonly timestamp: number
}

/**
 * Verifies a Standard Webhooks request: any `v1,` entry must match one made with any secret (constant
 * time), then the timestamp must lie within the window. Throws a `RangeError` for an invalid secret.
 * @since 0.1.0
 */
export const verify = (options: VerifyOptions): Either.Either<Verified, SignatureError> => {
  const secrets = secretList(options.secret)
  if (secrets.length === 0) throw new RangeError("At least one Standard Webhooks secret is needed to verify")
  const keys = secrets.map(requireKey)
  const tolerance = options.toleranceSeconds ?? ReplayWindow.defaultToleranceSeconds
  const id = single(options.headers, headerNames.id, headerNames.id)
  if (typeof id !== "string") return Either.left(id)
  const timestampText = single(options.headers, headerNames.timestamp, headerNames.timestamp)
  if (typeof timestampText !== "string") return Either.left(timestampText)
  const signatures = single(options.headers, headerNames.signature, headerNames.signature)
  if (typeof signatures !== "string") return Either.left(signatures)
  if (!/^\d{1,15}$/.test(timestampText)) {
    return Either.left(
      new MalformedHeader({ header: headerNames.timestamp, reason: "expected an integer of epoch seconds" })
    )
  }
  const entries = signatures.split(" ")
  if (entries.length > maxSignatures) {
    return Either.left(
      new MalformedHeader({ header: headerNames.signature, reason: `more than ${maxSignatures} signatures` })
    )
  }
  const given: Array<Uint8Array> = []
  for (const entry of entries) {
    const [version, encoded] = entry.split(",", 2)
    if (version !== "v1" || encoded === undefined) continue
    const bytes = decodeBase64(encoded)
    if (bytes !== undefined) given.push(bytes)
  }
  let matched = false
  for (const key of keys) {
    const expected = mac(key, id, timestampText, options.rawBody).digest()
    for (const bytes of given) if (bytes.length === expected.length && timingSafeEqual(bytes, expected)) matched = true
  }
  if (!matched) return Either.left(new SignatureMismatch())
  const timestamp = Number(timestampText)
  const outside = ReplayWindow.outsideWindow(timestamp, options.now, tolerance)
  return outside === undefined ? Either.right({ method: "standard-webhooks", id, timestamp }) : Either.left(outside)
}
