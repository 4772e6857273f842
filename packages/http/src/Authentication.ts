/**
 * API authentication: `Authorization: Bearer <apiKey>` on every endpoint but health and docs;
 * the key's workspace becomes the request's `CurrentWorkspace`.
 * @since 0.1.0
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { ApiKeys } from "@waybill/core/ApiKeys"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Unauthorized } from "./ApiError.js"
import { RequestChecks } from "./internal/checkedRequest.js"

/** The API's bearer-key middleware. @since 0.1.0 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@waybill/http/Authentication", {
  failure: Unauthorized,
  provides: CurrentWorkspace,
  security: { apiKey: HttpApiSecurity.bearer }
}) {}

// Read again because the platform slices the scheme off blindly. No comma: a Fetch request joins
// repeated headers with ", ", which must not read as one token.
const BEARER = /^Bearer ([\x21-\x2b\x2d-\x7e]+)$/

// One body whatever the reason: a caller learns nothing about which keys exist.
const refused = Effect.fail(
  new Unauthorized({ message: "A valid API key is required: send Authorization: Bearer <apiKey>", issues: [] })
)

/** The credential of an `Authorization: Bearer <credential>` header, if it has that form. @since 0.3.0 */
export const bearerCredential = (header: string | undefined): string | undefined =>
  header === undefined ? undefined : BEARER.exec(header)?.[1]

/** The workspace of an `Authorization` header's key, or the one `Unauthorized` whatever the reason. @since 0.1.0 */
export const authenticate = (
  keys: ApiKeys["Type"],
  header: string | undefined
): Effect.Effect<CurrentWorkspace["Type"], Unauthorized> => {
  const credential = bearerCredential(header)
  if (credential === undefined) return refused
  return Effect.flatMap(keys.authenticate(Redacted.make(credential)), (principal) =>
    Option.isNone(principal)
      ? refused
      : Effect.succeed({ id: principal.value.workspaceId, apiKeyId: principal.value.apiKeyId })
  )
}

const AUTHORIZATION = "authorization"

const rawHeadersOf = (source: unknown): ReadonlyArray<string> | undefined => {
  const raw =
    typeof source === "object" && source !== null ? (source as { rawHeaders?: unknown }).rawHeaders : undefined
  return Array.isArray(raw) ? raw : undefined
}

/**
 * A request's `Authorization` header when it carries exactly one, else `undefined` (refused).
 * Node keeps only the first of repeated headers, so its raw headers are counted.
 * @since 0.1.0
 */
export const authorizationOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const header = request.headers.authorization
  if (header === undefined) return undefined
  const raw = rawHeadersOf(request.source)
  return raw === undefined ? header : authorizationOfRawHeaders(raw)
}

/**
 * The one `Authorization` header of Node's raw header list (`req.rawHeaders`), else `undefined`
 * (none, or several: refused like a missing one). For a host's own routes beside Waybill's.
 * @since 0.2.0
 */
export const authorizationOfRawHeaders = (raw: ReadonlyArray<string>): string | undefined => {
  let found: string | undefined
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!
    if (name.length === AUTHORIZATION.length && name.toLowerCase() === AUTHORIZATION) {
      if (found !== undefined) return undefined
      found = raw[index + 1] ?? ""
    }
  }
  return found
}

/** `authenticate` with a request's one `Authorization` header (`authorizationOf`). @since 0.1.0 */
export const authenticateRequest = (
  keys: ApiKeys["Type"],
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<CurrentWorkspace["Type"], Unauthorized> => authenticate(keys, authorizationOf(request))

/** The middleware over `ApiKeys`; a request with a body keeps the workspace the checks found. @since 0.1.0 */
export const layer: Layer.Layer<Authentication, never, ApiKeys> = Layer.effect(
  Authentication,
  Effect.map(ApiKeys, (keys) =>
    Authentication.of({
      apiKey: () =>
        Effect.withFiberRuntime((fiber) => {
          const checked = Context.getOption(fiber.currentContext, RequestChecks)
          if (Option.isSome(checked)) return Effect.succeed(checked.value.workspace)
          return authenticateRequest(keys, Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest))
        })
    })
  )
)
