/**
 * The checks every request passes before routing (docs/security.md, Requests); a body method is
 * authenticated before its body is read. Handlers get the result through `checkedRequest.ts`.
 */
import { IncomingMessage } from "node:http"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ApiKeys } from "@waybill/core/ApiKeys"
import { ConsoleTokens, looksLikeToken } from "@waybill/core/ConsoleTokens"
import type * as Issue from "@waybill/core/Issue"
import * as JsonDepth from "@waybill/core/JsonDepth"
import * as JsonInput from "@waybill/core/JsonInput"
import * as JsonText from "@waybill/core/JsonText"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { type BadRequest, type Conflict, Forbidden, type IdempotencyKeyReused, Unauthorized } from "../ApiError.js"
import { authenticateRequest, authorizationOf, bearerCredential } from "../Authentication.js"
import { type CheckedBody, CheckedServerRequest, RequestChecks } from "./checkedRequest.js"
import * as ConsoleScope from "./consoleScope.js"
import { errorResponse, RETRY_AFTER_SECONDS } from "./contractErrors.js"
import type { Route } from "./directRoutes.js"

/** Request bodies above this size are refused with 413. */
export const MAX_BODY_BYTES = 1024 * 1024

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"])

const JSON_MEDIA_TYPE = "application/json"

/** Why a `Content-Type` is refused (415), or `undefined` for JSON with no charset but UTF-8. */
export const mediaTypeRefusal = (contentType: string | undefined): string | undefined => {
  if (contentType === JSON_MEDIA_TYPE) return undefined
  if (contentType === undefined) return "Request bodies must be sent as Content-Type: application/json"
  const semicolon = contentType.indexOf(";")
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim()
  if (type.toLowerCase() !== JSON_MEDIA_TYPE) {
    return `Request bodies must be sent as Content-Type: application/json, not ${contentType.slice(0, 100)}`
  }
  if (semicolon === -1) return undefined
  for (const [name, value] of parameters(contentType.slice(semicolon))) {
    if (name.toLowerCase() === "charset" && value.toLowerCase() !== "utf-8") {
      return `Request bodies must be UTF-8: charset=${value.slice(0, 40)} is not accepted`
    }
  }
  return undefined
}

// `;name=value` pairs, a value a token or a quoted string (RFC 9110 §5.6.6).
const PARAMETER = /;\s*([^;=\s]*)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^;]*))?/g

const parameters = (text: string): Array<readonly [string, string]> => {
  const found: Array<readonly [string, string]> = []
  for (const match of text.matchAll(PARAMETER)) {
    const raw = match[2]
    if (raw === undefined) continue
    const value = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, "$1") : raw.trim()
    found.push([match[1]!, value])
  }
  return found
}

const TOO_LARGE = Symbol("TooLarge")
type Read = Uint8Array | typeof TOO_LARGE

// Past the limit the rest is drained unread, then 413 with `Connection: close`: destroying the
// socket, as the platform's reader does, would leave the client without an answer.
const readNodeBody = (source: IncomingMessage) =>
  Effect.async<Read, Error>((resume) => {
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
      resume(Effect.succeed(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
    }
    const onError = (error: Error) => {
      cleanup()
      resume(Effect.fail(error))
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
    return Effect.sync(cleanup)
  })

const readWebBody = (source: Request) =>
  Effect.tryPromise(async (signal): Promise<Read> => {
    const reader = source.body!.getReader()
    signal.addEventListener("abort", () => void reader.cancel().catch(() => {}), { once: true })
    const chunks: Array<Uint8Array> = []
    let size = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size <= MAX_BODY_BYTES) chunks.push(value)
    }
    if (size > MAX_BODY_BYTES) return TOO_LARGE
    if (chunks.length === 1) return chunks[0]!
    const bytes = new Uint8Array(size)
    let offset = 0
    for (const chunk of chunks) {
      bytes.set(chunk, offset)
      offset += chunk.length
    }
    return bytes
  })

const readOtherBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(
    HttpIncomingMessage.withMaxBodySize(request.arrayBuffer, Option.some(MAX_BODY_BYTES)),
    (buffer): Read => (buffer.byteLength > MAX_BODY_BYTES ? TOO_LARGE : new Uint8Array(buffer))
  )

const readBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<Read, unknown> =>
  request.source instanceof IncomingMessage
    ? readNodeBody(request.source)
    : request.source instanceof Request
      ? readWebBody(request.source)
      : readOtherBody(request)

const hasBody = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const length = request.headers["content-length"]
  // An in-process Request may lack a length; an adapter's bodiless one still has a body stream.
  if (request.source instanceof Request) return request.source.body !== null && length !== "0"
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0")
}

// Invalid UTF-8 is refused, never replaced by U+FFFD; a kept byte order mark fails JSON.parse.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

// For an answer sent before the body was read to its end: the rest would read as the next request.
const closeConnection = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeader(response, "connection", "close")

const closingConnection = (
  _request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
) => Effect.succeed(closeConnection(response))

const tooLarge = () => closeConnection(errorResponse(413, `The request body exceeds ${MAX_BODY_BYTES} bytes`))

const refusedBody = (message: string, issues: ReadonlyArray<Issue.Issue> = []) =>
  Effect.succeed(errorResponse(400, message, issues))

const NOT_STORABLE = /cannot be stored|is not Unicode text/

const messageFor = (issues: ReadonlyArray<Issue.Issue>) =>
  issues.every((issue) => NOT_STORABLE.test(issue.message))
    ? "The request body holds text that cannot be stored"
    : `The request body holds ${issues.length === 1 ? "a value" : "values"} that cannot be taken as sent`

/** The 400 of a body whose walk (`JsonInput.inspect`) found something: its message and issues. */
export const bodyRefusal = (
  found: JsonInput.Inspection
): { readonly message: string; readonly issues: ReadonlyArray<Issue.Issue> } | undefined =>
  found.tooDeep !== undefined
    ? {
        message: `The request body nests deeper than ${JsonDepth.maxDepth} levels of objects and arrays`,
        issues: [found.tooDeep]
      }
    : found.issues.length > 0
      ? { message: messageFor(found.issues), issues: found.issues }
      : undefined

type DirectRoutes = (request: HttpServerRequest.HttpServerRequest) => Route | undefined

type DirectError = BadRequest | IdempotencyKeyReused | Conflict

// One body whatever the reason, as for keys: expired, revoked and unknown tokens look alike.
const tokenRefused = new Unauthorized({
  message: "This console token is not accepted: it has expired, was revoked or is not known",
  issues: []
})

const beyondScope = (scope: string) =>
  new Forbidden({
    message: `A console token with ${scope} scope cannot use this route: it reaches only the operator console's routes${scope === "read" ? " that read" : ""}`,
    issues: []
  })

// A request with a console token (`wbc_…`): authenticated, then held to its scope's routes before
// anything else is looked at; routes that need no credential ignore it.
const checkToken = <E, R>(
  tokens: ConsoleTokens["Type"],
  request: HttpServerRequest.HttpServerRequest,
  credential: string,
  app: HttpApp.Default<E, R>,
  direct: DirectRoutes
): HttpApp.Default<E | DirectError | Unauthorized | Forbidden, R> => {
  const access = ConsoleScope.access(request.method, request.url)
  if (access === "open") return app
  const refuse = (error: Unauthorized | Forbidden) =>
    Effect.zipRight(
      hasBody(request) ? HttpApp.appendPreResponseHandler(closingConnection) : Effect.void,
      Effect.fail(error)
    )
  return Effect.flatMap(
    tokens.authenticate(Redacted.make(credential)),
    (principal): HttpApp.Default<E | DirectError | Unauthorized | Forbidden, R> => {
      if (Option.isNone(principal)) return refuse(tokenRefused)
      const { scope, label, expiresAt, tokenId, workspaceId } = principal.value
      if (!access(scope)) return refuse(beyondScope(scope))
      const workspace = { id: workspaceId, apiKeyId: tokenId, consoleToken: { scope, label, expiresAt } }
      return BODY_METHODS.has(request.method)
        ? checkBody(request, workspace, app, direct)
        : withChecked(app, request, workspace, undefined)
    }
  )
}

const checkBody = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  workspace: CurrentWorkspace["Type"],
  app: HttpApp.Default<E, R>,
  direct: DirectRoutes
): HttpApp.Default<E | DirectError, R> => {
  if (!hasBody(request)) return withChecked(app, request, workspace, undefined)
  const refusal = mediaTypeRefusal(request.headers["content-type"])
  if (refusal !== undefined) return Effect.succeed(closeConnection(errorResponse(415, refusal)))
  const length = request.headers["content-length"]
  if (length !== undefined && Number(length) > MAX_BODY_BYTES) return Effect.succeed(tooLarge())
  return Effect.matchEffect(readBody(request), {
    onFailure: () => refusedBody("The request body could not be read"),
    onSuccess: (bytes): HttpApp.Default<E | DirectError, R> => {
      if (bytes === TOO_LARGE || bytes.byteLength > MAX_BODY_BYTES) return Effect.succeed(tooLarge())
      let text: string
      try {
        text = utf8.decode(bytes)
      } catch {
        return refusedBody("The request body is not valid UTF-8", [
          { path: "", message: "is not valid UTF-8 (bodies are taken as sent, never with bytes replaced)" }
        ])
      }
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch (error) {
        return refusedBody(
          `Malformed JSON in the request body: ${error instanceof Error ? error.message : "parse error"}`
        )
      }
      // JSON.parse is iterative but the decoders behind it recurse, so depth is refused here.
      // Strings are looked at only when the text could spell a NUL or a surrogate.
      const refusal = bodyRefusal(JsonInput.inspect(value, { text: JsonText.mayHoldTextIssues(text) }))
      if (refusal !== undefined) return refusedBody(refusal.message, refusal.issues)
      const route = direct(request)
      return route === undefined
        ? withChecked(app, request, workspace, { bytes, text, value })
        : Effect.provideService(route(value), CurrentWorkspace, workspace)
    }
  })
}

const withChecked = <E, R>(
  app: HttpApp.Default<E, R>,
  request: HttpServerRequest.HttpServerRequest,
  workspace: CurrentWorkspace["Type"],
  body: CheckedBody | undefined
): HttpApp.Default<E, R> => {
  const checked = Context.make(RequestChecks, { workspace, body }).pipe(
    Context.add(HttpServerRequest.HttpServerRequest, new CheckedServerRequest(request, body))
  )
  return Effect.mapInputContext(app, (context: Context.Context<R>) => Context.merge(context, checked))
}

const NUL_ESCAPE = /%00/

const decodedName = (encoded: string): string => {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, " "))
  } catch {
    return encoded
  }
}

// A NUL (`%00`) is in no id, path or parameter, and PostgreSQL cannot store it as text.
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

// Every 503 says when to try again: a pre-response handler, as the platform sends a response as
// soon as the app returns it.
const withRetryAfter = (
  _request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
) =>
  Effect.succeed(
    response.status === 503 && response.headers["retry-after"] === undefined
      ? HttpServerResponse.setHeader(response, "retry-after", String(RETRY_AFTER_SECONDS))
      : response
  )

/**
 * The middleware over the API keys and console tokens: no handler sees an unchecked request. A
 * request with a direct route is answered by it once checked, in place of `app`.
 */
export const make = (
  direct: DirectRoutes
): Effect.Effect<
  <E, R>(
    app: HttpApp.Default<E, R>
  ) => HttpApp.Default<E | Unauthorized | Forbidden | DirectError, R | HttpServerRequest.HttpServerRequest>,
  never,
  ApiKeys | ConsoleTokens
> =>
  Effect.map(
    Effect.all([ApiKeys, ConsoleTokens]),
    ([keys, tokens]) =>
      <E, R>(app: HttpApp.Default<E, R>) =>
        Effect.zipRight(
          HttpApp.appendPreResponseHandler(withRetryAfter),
          Effect.withFiberRuntime<
            HttpServerResponse.HttpServerResponse,
            E | Unauthorized | Forbidden | DirectError,
            R | HttpServerRequest.HttpServerRequest
          >((fiber) => {
            const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
            const refusedUrl = nulInUrl(request.url)
            if (refusedUrl !== undefined) return Effect.succeed(refusedUrl)
            const credential = request.headers.authorization?.startsWith("Bearer wbc_")
              ? bearerCredential(authorizationOf(request))
              : undefined
            if (credential !== undefined && looksLikeToken(credential)) {
              return checkToken(tokens, request, credential, app, direct)
            }
            if (!BODY_METHODS.has(request.method)) return app
            return Effect.flatMap(
              // A refused request's body is never read, so its connection closes after the answer.
              Effect.tapError(authenticateRequest(keys, request), () =>
                hasBody(request) ? HttpApp.appendPreResponseHandler(closingConnection) : Effect.void
              ),
              (workspace) => checkBody(request, workspace, app, direct)
            )
          })
        )
  )
