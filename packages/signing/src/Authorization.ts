/**
 * Basic and Bearer webhook authentication: the `Authorization` values the service sends, and their
 * checks on the receiving side.
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"
import * as Either from "effect/Either"
import type * as Redacted from "effect/Redacted"
import { reveal, sameCredential } from "./internal/crypto.js"
import { type HeadersInput, single } from "./internal/headers.js"
import { type CredentialsError, CredentialsMismatch, MalformedHeader } from "./VerificationError.js"

// Control characters (HTAB aside) cannot travel in a header value: refused, not injected.
const hasControl = (value: string): boolean => {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true
  }
  return false
}

/**
 * `Authorization: Basic …` per RFC 7617. Throws a `RangeError` when the username contains a colon or
 * either part a control character; registration must refuse such credentials.
 * @since 0.1.0
 */
export const basicAuthorization = (username: string, password: string | Redacted.Redacted<string>): string => {
  const secret = reveal(password)
  if (username.includes(":")) throw new RangeError("A Basic username must not contain a colon")
  if (hasControl(username) || hasControl(secret)) {
    throw new RangeError("Basic credentials must not contain control characters")
  }
  return `Basic ${Buffer.from(`${username}:${secret}`, "utf8").toString("base64")}`
}

/**
 * `Authorization: Bearer <token>`. Throws a `RangeError` for an empty token or one with a control
 * character or surrounding white space.
 * @since 0.1.0
 */
export const bearerAuthorization = (token: string | Redacted.Redacted<string>): string => {
  const value = reveal(token)
  if (value.length === 0 || value.trim() !== value || hasControl(value)) {
    throw new RangeError("A Bearer token must be non-empty, without control characters or surrounding white space")
  }
  return `Bearer ${value}`
}

/** A delivery whose Basic credentials held. @since 0.1.0 */
export interface BasicVerified {
  readonly method: "basic"
  readonly username: string
}

/** A delivery whose Bearer token held. @since 0.1.0 */
export interface BearerVerified {
  readonly method: "bearer"
}

const AUTHORIZATION = "Authorization"

const credentialsOf = (headers: HeadersInput, scheme: "basic" | "bearer"): Either.Either<string, CredentialsError> => {
  const value = single(headers, "authorization", AUTHORIZATION)
  if (typeof value !== "string") return Either.left(value)
  const space = value.indexOf(" ")
  const given = space === -1 ? value : value.slice(0, space)
  if (given.toLowerCase() !== scheme) {
    return Either.left(
      new MalformedHeader({
        header: AUTHORIZATION,
        reason: `expected the ${scheme === "basic" ? "Basic" : "Bearer"} scheme`
      })
    )
  }
  const credentials = space === -1 ? "" : value.slice(space + 1).trim()
  if (credentials === "") return Either.left(new MalformedHeader({ header: AUTHORIZATION, reason: "no credentials" }))
  return Either.right(credentials)
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** A password or token. @since 0.1.0 */
export type Credential = string | Redacted.Redacted<string>

/** One credential or several: a receiver moving to new credentials accepts the old and the new. @since 0.1.0 */
export type Credentials = Credential | ReadonlyArray<Credential>

const credentialList = (credentials: Credentials): ReadonlyArray<Credential> => {
  const list = Array.isArray(credentials) ? (credentials as ReadonlyArray<Credential>) : [credentials as Credential]
  if (list.length === 0) throw new RangeError("At least one credential is needed to verify")
  return list
}

// Every one compared, so the time does not say which matched.
const anyOf = (given: string | Uint8Array, wanted: ReadonlyArray<string | Uint8Array>): boolean => {
  let matched = false
  for (const candidate of wanted) if (sameCredential(given, candidate)) matched = true
  return matched
}

/**
 * Checks `Authorization: Basic …` against the username and password (or any of several), in constant time.
 * @since 0.1.0
 */
export const verifyBasic = (
  headers: HeadersInput,
  expected: { readonly username: string; readonly password: Credentials }
): Either.Either<BasicVerified, CredentialsError> =>
  Either.flatMap(credentialsOf(headers, "basic"), (encoded): Either.Either<BasicVerified, CredentialsError> => {
    if (!BASE64.test(encoded)) {
      return Either.left(new MalformedHeader({ header: AUTHORIZATION, reason: "credentials are not Base64" }))
    }
    const decoded = Buffer.from(encoded, "base64")
    if (!decoded.includes(0x3a)) {
      return Either.left(new MalformedHeader({ header: AUTHORIZATION, reason: "credentials lack a colon" }))
    }
    const wanted = credentialList(expected.password).map((password) =>
      Buffer.from(`${expected.username}:${reveal(password)}`, "utf8")
    )
    return anyOf(decoded, wanted)
      ? Either.right({ method: "basic", username: expected.username })
      : Either.left(new CredentialsMismatch({ scheme: "basic" }))
  })

/** Checks `Authorization: Bearer …` against the token (or any of several), in constant time. @since 0.1.0 */
export const verifyBearer = (
  headers: HeadersInput,
  token: Credentials
): Either.Either<BearerVerified, CredentialsError> =>
  Either.flatMap(
    credentialsOf(headers, "bearer"),
    (given): Either.Either<BearerVerified, CredentialsError> =>
      anyOf(given, credentialList(token).map(reveal))
        ? Either.right({ method: "bearer" })
        : Either.left(new CredentialsMismatch({ scheme: "bearer" }))
  )
