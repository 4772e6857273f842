/**
 * The receiver kit: authenticate a delivery from a Fetch `Request` or a Node `IncomingMessage` by the
 * webhook's method (HMAC in either scheme, Basic or Bearer), reading the raw body exactly once.
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Authorization from "./Authorization.js"
import * as Hmac from "./Hmac.js"
import type { HeaderRecord } from "./internal/headers.js"
import * as StandardWebhooks from "./StandardWebhooks.js"
import {
  type BodyError,
  BodyTooLarge,
  BodyUnreadable,
  type CredentialsError,
  type SignatureError,
  type VerificationError
} from "./VerificationError.js"

/**
 * The settings the webhook was registered with (HMAC `scheme` defaults to `waybill`). Every secret,
 * password and token may be a list, any of which passes (docs/receiving-webhooks.md, "Rotating a secret").
 * @since 0.1.0
 */
export type Credentials =
  | { readonly type: "hmac"; readonly secret: Hmac.Secrets; readonly scheme?: "waybill" | undefined }
  | { readonly type: "hmac"; readonly secret: StandardWebhooks.Secrets; readonly scheme: "standard-webhooks" }
  | { readonly type: "basic"; readonly username: string; readonly password: Authorization.Credentials }
  | { readonly type: "bearer"; readonly token: Authorization.Credentials }

/** The verdict on an authenticated delivery. @since 0.1.0 */
export type Verified =
  | Hmac.Verified
  | StandardWebhooks.Verified
  | Authorization.BasicVerified
  | Authorization.BearerVerified

/** What `authenticate` needs besides the credentials. @since 0.1.0 */
export interface AuthenticateOptions {
  readonly headers: Hmac.HeadersInput
  readonly rawBody: Hmac.RawBody
  /** Epoch seconds; only HMAC uses it. */
  readonly now: number
  readonly toleranceSeconds?: number | undefined
}

/** Authenticates a delivery whose body is already in hand, by the configured method. @since 0.1.0 */
export const authenticate = (
  credentials: Credentials,
  options: AuthenticateOptions
): Either.Either<Verified, SignatureError | CredentialsError> => {
  switch (credentials.type) {
    case "hmac":
      if (credentials.scheme === "standard-webhooks") {
        return StandardWebhooks.verify({
          secret: credentials.secret,
          headers: options.headers,
          rawBody: options.rawBody,
          now: options.now,
          toleranceSeconds: options.toleranceSeconds
        })
      }
      return Hmac.verify({
        secret: credentials.secret,
        headers: options.headers,
        rawBody: options.rawBody,
        now: options.now,
        toleranceSeconds: options.toleranceSeconds
      })
    case "basic":
      return Authorization.verifyBasic(options.headers, credentials)
    case "bearer":
      return Authorization.verifyBearer(options.headers, credentials.token)
  }
}

/** A delivery that passed: its raw body (read once; parse `text` as JSON yourself) and the verdict. @since 0.1.0 */
export interface Received {
  readonly verified: Verified
  /** The body bytes exactly as received: what the signature covers. */
  readonly rawBody: Uint8Array
  /** The body decoded as UTF-8. */
  readonly text: string
}

/** Options of the request helpers. @since 0.1.0 */
export interface ReceiveOptions {
  /** The HMAC replay window in seconds, both directions; 300 when omitted. */
  readonly toleranceSeconds?: number | undefined
  /** Bodies beyond this many bytes are refused with `BodyTooLarge`; 5 MiB when omitted. */
  readonly maxBodyBytes?: number | undefined
}

/** The default body limit of the request helpers: 5 MiB. @since 0.1.0 */
export const defaultMaxBodyBytes = 5 * 1024 * 1024

const decoder = new TextDecoder()

const declaredTooLarge = (contentLength: string | null | undefined, maxBytes: number): boolean => {
  if (contentLength == null) return false
  const length = Number(contentLength)
  return Number.isFinite(length) && length > maxBytes
}

// On the limit it stops pulling without destroying the stream, so a Node server can still answer 413.
const collect = async (
  next: () => Promise<IteratorResult<unknown>>,
  maxBytes: number
): Promise<Uint8Array | BodyTooLarge> => {
  const chunks: Array<Uint8Array> = []
  let total = 0
  for (;;) {
    const step = await next()
    if (step.done) break
    const chunk =
      typeof step.value === "string"
        ? Buffer.from(step.value, "utf8")
        : step.value instanceof Uint8Array
          ? step.value
          : undefined
    if (chunk === undefined) throw new TypeError("the body stream yielded something other than bytes or text")
    total += chunk.byteLength
    if (total > maxBytes) return new BodyTooLarge({ maxBytes })
    chunks.push(chunk)
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total)
}

const reason = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

const readWith = (
  read: (maxBytes: number) => Promise<Uint8Array | BodyTooLarge>,
  maxBytes: number
): Effect.Effect<Uint8Array, BodyError> =>
  Effect.tryPromise({
    try: () => read(maxBytes),
    catch: (cause) => new BodyUnreadable({ reason: reason(cause) })
  }).pipe(Effect.flatMap((body) => (body instanceof BodyTooLarge ? Effect.fail(body) : Effect.succeed(body))))

const receive = (
  headers: Hmac.HeadersInput,
  readBody: (maxBytes: number) => Promise<Uint8Array | BodyTooLarge>,
  credentials: Credentials,
  options: ReceiveOptions | undefined
): Effect.Effect<Received, VerificationError> =>
  Effect.gen(function* () {
    const maxBytes = options?.maxBodyBytes ?? defaultMaxBodyBytes
    // Basic and Bearer do not depend on the body: refuse before reading it.
    const early =
      credentials.type === "hmac" ? undefined : yield* authenticate(credentials, { headers, rawBody: "", now: 0 })
    const rawBody = yield* readWith(readBody, maxBytes)
    const verified =
      early ??
      (yield* authenticate(credentials, {
        headers,
        rawBody,
        now: Math.floor((yield* Clock.currentTimeMillis) / 1000),
        toleranceSeconds: options?.toleranceSeconds
      }))
    return { verified, rawBody, text: decoder.decode(rawBody) }
  })

const requestBody = (request: Request) => async (maxBytes: number) => {
  if (request.bodyUsed) throw new Error("the body was already read")
  if (declaredTooLarge(request.headers.get("content-length"), maxBytes)) return new BodyTooLarge({ maxBytes })
  if (request.body === null) return new Uint8Array(0)
  const reader = request.body.getReader()
  const body = await collect(() => reader.read(), maxBytes)
  if (body instanceof BodyTooLarge) await reader.cancel().catch(() => undefined)
  return body
}

const messageBody = (message: IncomingMessageLike) => async (maxBytes: number) => {
  const length = message.headers["content-length"]
  if (typeof length === "string" && declaredTooLarge(length, maxBytes)) return new BodyTooLarge({ maxBytes })
  const iterator = message[Symbol.asyncIterator]()
  return collect(() => iterator.next(), maxBytes)
}

const authenticator =
  <Input>(
    headersOf: (input: Input) => Hmac.HeadersInput,
    bodyOf: (input: Input) => (maxBytes: number) => Promise<Uint8Array | BodyTooLarge>
  ) =>
  (input: Input, credentials: Credentials, options?: ReceiveOptions): Effect.Effect<Received, VerificationError> =>
    receive(headersOf(input), bodyOf(input), credentials, options)

const withHmacSecret =
  <Input>(
    authenticate: (
      input: Input,
      credentials: Credentials,
      options?: ReceiveOptions
    ) => Effect.Effect<Received, VerificationError>
  ) =>
  (input: Input, secret: Hmac.Secrets, options?: ReceiveOptions): Effect.Effect<Received, VerificationError> =>
    authenticate(input, { type: "hmac", secret }, options)

/**
 * Authenticates a Fetch `Request`: reads its body once, within `maxBodyBytes`, and hands it back with
 * the verdict. The time comes from the `Clock`.
 * @since 0.1.0
 */
export const authenticateRequest = authenticator((request: Request) => request.headers, requestBody)

/** `authenticateRequest` for an HMAC-signed webhook. @since 0.1.0 */
export const verifyRequest = withHmacSecret(authenticateRequest)

/** The parts of a Node `http.IncomingMessage` the helpers use, typed structurally (no `node:http`). @since 0.1.0 */
export interface IncomingMessageLike extends AsyncIterable<unknown> {
  readonly headers: HeaderRecord
}

/**
 * Authenticates a Node `IncomingMessage` as `authenticateRequest` does. Put no JSON body parser in
 * front of it: the signature covers the bytes as sent.
 * @since 0.1.0
 */
export const authenticateIncomingMessage = authenticator((message: IncomingMessageLike) => message.headers, messageBody)

/** `authenticateIncomingMessage` for an HMAC-signed webhook. @since 0.1.0 */
export const verifyIncomingMessage = withHmacSecret(authenticateIncomingMessage)
