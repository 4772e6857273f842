/**
 * The contract's error body (§1): `{ code, message, issues }` for every non-2xx response, one
 * class per status so that the HttpApi definition, OpenAPI and clients agree.
 *
 * @since 0.1.0
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Issue } from "@waybill/core/Issue"
import type { ValidationError } from "@waybill/core/ValidationError"
import * as Schema from "effect/Schema"

const issues = Schema.Array(Issue)

/**
 * 400: malformed JSON, a body nested deeper than 64 levels, schema violation or rule violation;
 * `issues` lists every violation.
 *
 * @since 0.1.0
 * @category errors
 */
export class BadRequest extends Schema.Class<BadRequest>("BadRequest")(
  { code: Schema.tag("bad_request"), message: Schema.String, issues },
  HttpApiSchema.annotations({ status: 400 })
) {}

/**
 * 401: missing, malformed or unknown API key.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends Schema.Class<Unauthorized>("Unauthorized")(
  { code: Schema.tag("unauthorized"), message: Schema.String, issues },
  HttpApiSchema.annotations({ status: 401 })
) {}

/**
 * 404: no such resource in the caller's workspace.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFound extends Schema.Class<NotFound>("NotFound")(
  { code: Schema.tag("not_found"), message: Schema.String, issues },
  HttpApiSchema.annotations({ status: 404 })
) {}

/**
 * 409: an action not allowed in the current status, or a conflicting request.
 *
 * @since 0.1.0
 * @category errors
 */
export class Conflict extends Schema.Class<Conflict>("Conflict")(
  { code: Schema.Literal("invalid_transition", "conflict"), message: Schema.String, issues },
  HttpApiSchema.annotations({ status: 409 })
) {}

/**
 * 412: the draft's transport does not parse for product evaluation.
 *
 * @since 0.1.0
 * @category errors
 */
export class PreconditionFailed extends Schema.Class<PreconditionFailed>("PreconditionFailed")(
  { code: Schema.tag("precondition_failed"), message: Schema.String, issues },
  HttpApiSchema.annotations({ status: 412 })
) {}

/**
 * 422: an `Idempotency-Key` sent again with another body or route (contract §8).
 *
 * @since 0.1.0
 * @category errors
 */
export class IdempotencyKeyReused extends Schema.Class<IdempotencyKeyReused>("IdempotencyKeyReused")(
  { code: Schema.tag("idempotency_key_reused"), message: Schema.String, issues },
  HttpApiSchema.annotations({ status: 422 })
) {}

/**
 * 503: the database cannot be reached; nothing was written (sent with `Retry-After`).
 *
 * @since 0.1.0
 * @category errors
 */
export class Unavailable extends Schema.Class<Unavailable>("Unavailable")(
  { code: Schema.tag("unavailable"), message: Schema.String, issues },
  HttpApiSchema.annotations({ status: 503 })
) {}

/**
 * The codes of the contract, by status, for responses produced outside the API definition
 * (unknown routes, body limits, unexpected failures).
 *
 * @since 0.1.0
 * @category errors
 */
export const codeForStatus = (status: number): string => {
  switch (status) {
    case 400:
      return "bad_request"
    case 401:
      return "unauthorized"
    case 404:
      return "not_found"
    case 405:
      return "method_not_allowed"
    case 409:
      return "conflict"
    case 412:
      return "precondition_failed"
    case 413:
      return "payload_too_large"
    case 415:
      return "unsupported_media_type"
    case 422:
      return "idempotency_key_reused"
    case 503:
      return "unavailable"
    default:
      return status >= 500 ? "internal" : "bad_request"
  }
}

/**
 * The error body as plain JSON.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorBody {
  readonly code: string
  readonly message: string
  readonly issues: ReadonlyArray<Issue>
}

/**
 * Builds a `BadRequest` from a domain `ValidationError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const badRequest = (error: ValidationError): BadRequest =>
  new BadRequest({ message: error.message, issues: error.issues })

/**
 * Builds a `NotFound` from a domain not-found error (its message names what was not found).
 *
 * @since 0.1.0
 * @category constructors
 */
export const notFound = (error: { readonly message: string }): NotFound =>
  new NotFound({ message: error.message, issues: [] })
