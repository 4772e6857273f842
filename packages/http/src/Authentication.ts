/**
 * API authentication (contract §1): `Authorization: Bearer <apiKey>` on every endpoint but
 * health and docs; the key's workspace becomes the `CurrentWorkspace` of the request.
 *
 * @since 0.1.0
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { ApiKeys } from "@waybill/core/ApiKeys"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Unauthorized } from "./ApiError.js"

/**
 * @since 0.1.0
 * @category middleware
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@waybill/http/Authentication", {
  failure: Unauthorized,
  provides: CurrentWorkspace,
  security: { apiKey: HttpApiSecurity.bearer }
}) {}

// The platform slices the scheme off blindly; the contract wants anything but exactly
// `Bearer <token>` refused, so the header is read again here.
const BEARER = /^Bearer ([\x21-\x7e]+)$/

// One body whatever the reason (missing, malformed, unknown or revoked): a caller learns nothing
// about which keys exist.
const refused = Effect.fail(
  new Unauthorized({ message: "A valid API key is required: send Authorization: Bearer <apiKey>", issues: [] })
)

/**
 * The workspace of an `Authorization` header's key, or the one `Unauthorized` whatever the reason:
 * what the middleware runs, and what routes served outside the API definition run the same way.
 *
 * @since 0.1.0
 * @category authentication
 */
export const authenticate = (
  keys: ApiKeys["Type"],
  header: string | undefined
): Effect.Effect<CurrentWorkspace["Type"], Unauthorized> => {
  const match = header === undefined ? null : BEARER.exec(header)
  if (match === null) return refused
  return Effect.flatMap(keys.authenticate(Redacted.make(match[1]!)), (principal) =>
    Option.isNone(principal)
      ? refused
      : Effect.succeed({ id: principal.value.workspaceId, apiKeyId: principal.value.apiKeyId })
  )
}

/**
 * The middleware over the `ApiKeys` service.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Authentication, never, ApiKeys> = Layer.effect(
  Authentication,
  Effect.map(ApiKeys, (keys) =>
    Authentication.of({
      apiKey: () =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          authenticate(keys, request.headers.authorization)
        )
    })
  )
)
