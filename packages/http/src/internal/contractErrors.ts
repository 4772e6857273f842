import { IncomingMessage } from "node:http"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Issue from "@waybill/core/Issue"
import * as JsonDepth from "@waybill/core/JsonDepth"
import * as JsonText from "@waybill/core/JsonText"
import { fromIssues, ValidationError } from "@waybill/core/ValidationError"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { BadRequest, codeForStatus } from "../ApiError.js"

/** Request bodies above this size are refused with 413 (contract §1). */
export const MAX_BODY_BYTES = 1024 * 1024

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"])
const JSON_MEDIA_TYPE = /^application\/json\s*(;.*)?$/i

export const errorResponse = (status: number, message: string, issues: ReadonlyArray<Issue.Issue> = []) =>
  HttpServerResponse.unsafeJson({ code: codeForStatus(status), message, issues }, { status })

const TOO_LARGE = Symbol("TooLarge")

const isBodyTooLarge = (cause: unknown): boolean =>
  cause instanceof HttpServerError.RequestError &&
  cause.cause instanceof Error &&
  cause.cause.message === "maxBytes exceeded"

/**
 * Reads a Node request body up to the limit. Past it, the rest is drained unread and the
 * caller answers 413 with `Connection: close` (destroying the socket, as the platform's own
 * reader does, would leave the client without an answer).
 */
const readNodeBody = (source: IncomingMessage) =>
  Effect.async<string | typeof TOO_LARGE, Error>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk)
        return
      }
      cleanup()
      source.resume()
      resume(Effect.succeed(TOO_LARGE))
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    }
    const onError = (error: Error) => {
      cleanup()
      resume(Effect.fail(error))
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
  })

// Built only for a body that is too large: most requests never need it.
const tooLarge = () =>
  HttpServerResponse.setHeader(
    errorResponse(413, `The request body exceeds ${MAX_BODY_BYTES} bytes`),
    "connection",
    "close"
  )

// The JSON value of every request whose body `checkBody` read and accepted.
const checkedBodies = new WeakMap<HttpServerRequest.HttpServerRequest, unknown>()

/**
 * The body the checks read, parsed and accepted for this request, or nothing when it had none
 * (a method without a body, an empty body) or was not seen by `checkBodies`.
 */
export const checkedBody = (request: HttpServerRequest.HttpServerRequest): Option.Option<unknown> =>
  checkedBodies.has(request) ? Option.some(checkedBodies.get(request)) : Option.none()

/**
 * Checks a request body before routing: JSON media type (415), size (413), well-formed JSON and
 * at most `JsonDepth.maxDepth` levels of nesting (400). Returns the response to send instead, or
 * nothing when the request may be routed.
 */
const checkBody = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined> =>
  Effect.gen(function* () {
    if (!BODY_METHODS.has(request.method)) return undefined
    const length = request.headers["content-length"]
    // A Fetch Request built in process (the web handler) may carry no length header; one that a
    // Node adapter made of a request without a body (`content-length: 0`) still has a body stream.
    const hasBody =
      request.source instanceof Request
        ? request.source.body !== null && length !== "0"
        : request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0")
    if (!hasBody) return undefined
    const contentType = request.headers["content-type"]
    if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType.trim())) {
      return errorResponse(
        415,
        `Request bodies must be sent as Content-Type: application/json${
          contentType === undefined ? "" : `, not ${contentType.slice(0, 100)}`
        }`
      )
    }
    if (length !== undefined && Number(length) > MAX_BODY_BYTES) return tooLarge()
    // Node requests are read here, within the limit, so that an oversized chunked body still gets
    // its 413; the text is then seeded into the request's body cache, which the API reads.
    const seedable = request.source instanceof IncomingMessage && Object.hasOwn(request, "textEffect")
    const text = yield* Effect.either(
      seedable
        ? readNodeBody(request.source as IncomingMessage)
        : HttpIncomingMessage.withMaxBodySize(request.text, Option.some(MAX_BODY_BYTES))
    )
    if (Either.isLeft(text))
      return isBodyTooLarge(text.left) ? tooLarge() : errorResponse(400, "The request body could not be read")
    if (text.right === TOO_LARGE || Buffer.byteLength(text.right, "utf8") > MAX_BODY_BYTES) return tooLarge()
    let parsed: unknown
    try {
      parsed = JSON.parse(text.right)
    } catch (error) {
      return errorResponse(
        400,
        `Malformed JSON in the request body: ${error instanceof Error ? error.message : "parse error"}`
      )
    }
    // V8's JSON.parse is iterative (it parses a 1 MiB body of nothing but brackets), but the
    // schema decoders, their error messages and JSON.stringify behind the routes recurse: a body
    // they could not survive is refused here, at the path where the limit is crossed.
    const tooDeep = JsonDepth.depthIssue(parsed)
    if (Option.isSome(tooDeep)) {
      return errorResponse(
        400,
        `The request body nests deeper than ${JsonDepth.maxDepth} levels of objects and arrays`,
        [tooDeep.value]
      )
    }
    // Strings PostgreSQL cannot store (NUL, unpaired surrogates) are refused here, each at its
    // path, rather than failing the write behind the route.
    if (JsonText.mayHoldTextIssues(text.right)) {
      const issues = JsonText.textIssues(parsed)
      if (issues.length > 0) {
        return errorResponse(400, "The request body holds text that cannot be stored", issues)
      }
    }
    if (seedable) {
      // The API reads the body through `json`, which would parse the text again: it gets the
      // value parsed here (an own property over the prototype's getter).
      Object.assign(request, { textEffect: Effect.succeed(text.right) })
      Object.defineProperty(request, "json", { value: Effect.succeed(parsed) })
    }
    checkedBodies.set(request, parsed)
    return undefined
  })

const NUL_ESCAPE = /%00/

const decodedName = (encoded: string): string => {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, " "))
  } catch {
    return encoded
  }
}

/**
 * The 400 for a URL that spells a NUL character (`%00`), which no id, path or parameter holds
 * and PostgreSQL cannot take as text, naming where it is; nothing for any other URL.
 */
const nulInUrl = (url: string): HttpServerResponse.HttpServerResponse | undefined => {
  if (!NUL_ESCAPE.test(url)) return undefined
  const query = url.indexOf("?")
  if (query === -1 || NUL_ESCAPE.test(url.slice(0, query))) {
    return errorResponse(400, "The request path contains %00 (a NUL character), which no path holds")
  }
  const names = url
    .slice(query + 1)
    .split("&")
    .filter((pair) => NUL_ESCAPE.test(pair))
    .map((pair) => JSON.stringify(decodedName(pair.split("=")[0]!).slice(0, 100)))
  return errorResponse(
    400,
    `The query parameter ${names.slice(0, 5).join(", ")} contains %00 (a NUL character), which no parameter holds`
  )
}

/**
 * Wraps the whole HTTP app: URL and body checks (a NUL in the URL 400, media type 415, size 413,
 * well-formed JSON, nesting depth and storable text 400) run before routing, so no handler ever
 * sees an unchecked request; every 503 gets its `Retry-After`.
 */
export const checkBodies = <E, R>(
  app: HttpApp.Default<E, R>
): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler(withRetryAfter),
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const refusedUrl = nulInUrl(request.url)
      if (refusedUrl !== undefined) return Effect.succeed(refusedUrl)
      // A method without a body goes straight to the app, with no check to run.
      return BODY_METHODS.has(request.method)
        ? Effect.flatMap(checkBody(request), (refused) => (refused === undefined ? app : Effect.succeed(refused)))
        : app
    })
  )

// Every 503 (the database unreachable, readiness included) says when to try again (contract §1).
// A pre-response handler, because the platform sends a response as soon as the app returns it.
const withRetryAfter = (
  _request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
) =>
  Effect.succeed(
    response.status === 503 && response.headers["retry-after"] === undefined
      ? HttpServerResponse.setHeader(response, "retry-after", String(RETRY_AFTER_SECONDS))
      : response
  )

/** Seconds a client is asked to wait before trying again while the database is unreachable. */
export const RETRY_AFTER_SECONDS = 5

/**
 * Failures the API definition does not describe itself, turned into the contract's body: request
 * decoding (400 with every issue), domain validation (400), unknown routes (404), the database
 * being unreachable (503, logged when an outage begins and once a minute while it lasts, not once
 * per request) and unexpected defects
 * (500, logged, no internals). Runs inside the API, around the router. `isOutage` tells an
 * unreachable database from a bug (the `Availability` port).
 */
export const describeFailures = (isOutage: (defect: unknown) => boolean) => {
  // One line when an outage begins (no request refused for twice the Retry-After before), then
  // one a minute at most while it lasts, with the count since the last.
  let loggedAt = 0
  let refusedAt = 0
  let unlogged = 0
  const outage = (defect: unknown) =>
    Effect.suspend(() => {
      unlogged++
      const now = Date.now()
      const begins = now - refusedAt > 2 * RETRY_AFTER_SECONDS * 1000
      refusedAt = now
      if (!begins && now - loggedAt < 60_000) return Effect.void
      const count = unlogged
      loggedAt = now
      unlogged = 0
      return Effect.logWarning(
        `The database cannot be reached: requests are answered 503 unavailable until it is back (${count} since the last report)`
      ).pipe(Effect.annotateLogs({ cause: defect instanceof Error ? defect.message : String(defect) }))
    }).pipe(Effect.as(errorResponse(503, "The database cannot be reached; nothing was written. Try again shortly.")))

  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E | BadRequest, R | HttpServerRequest.HttpServerRequest> =>
    Effect.catchAllCause(
      app,
      (
        cause
      ): Effect.Effect<HttpServerResponse.HttpServerResponse, E | BadRequest, HttpServerRequest.HttpServerRequest> => {
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) {
          const error: unknown = failure.value
          if (error instanceof HttpApiDecodeError) {
            const invalid = fromIssues(
              Issue.tidy(error.issues.map((issue) => Issue.make(issue.path.map(String).join("."), issue.message)))
            )
            return Effect.fail(new BadRequest({ message: invalid.message, issues: invalid.issues }))
          }
          if (error instanceof ValidationError) {
            return Effect.fail(new BadRequest({ message: error.message, issues: error.issues }))
          }
          if (error instanceof HttpServerError.RequestError) {
            return Effect.succeed(errorResponse(400, "The request body could not be read"))
          }
          if (error instanceof HttpServerError.RouteNotFound) {
            return Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
              errorResponse(404, `No route for ${request.method} ${request.url.split("?")[0]}`)
            )
          }
          return Effect.failCause(cause)
        }
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
        const defect = Cause.squash(cause)
        if (isOutage(defect)) return outage(defect)
        return Effect.as(
          Effect.logError("Unexpected failure while handling a request", defect),
          errorResponse(500, "Internal server error")
        )
      }
    )
}
