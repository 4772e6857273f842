import { createHash, timingSafeEqual } from "node:crypto"
import * as Redacted from "effect/Redacted"

/** A shared secret as configured: text (UTF-8), raw bytes, or a `Redacted` string. */
export type Secret = string | Uint8Array | Redacted.Redacted<string>

/** The key bytes (or string, which `createHmac` encodes as UTF-8) behind a secret. */
export const keyOf = (secret: Secret): string | Uint8Array => {
  const key = Redacted.isRedacted(secret) ? Redacted.value(secret) : secret
  if (typeof key === "string" ? key.length === 0 : !(key instanceof Uint8Array) || key.byteLength === 0) {
    // An empty key would let anyone sign: a configuration error, so thrown rather than returned.
    throw new RangeError("The HMAC secret must not be empty")
  }
  return key
}

/** Reveals a `Redacted` string, passes a plain one through. */
export const reveal = (value: string | Redacted.Redacted<string>): string =>
  Redacted.isRedacted(value) ? Redacted.value(value) : value

const digest = (value: string | Uint8Array): Buffer => createHash("sha256").update(value).digest()

/** Compares two credentials in constant time, lengths included: both are hashed to 32 bytes first. */
export const sameCredential = (a: string | Uint8Array, b: string | Uint8Array): boolean =>
  timingSafeEqual(digest(a), digest(b))
