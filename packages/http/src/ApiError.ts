/**
 * The contract's error body, `{ code, message, issues }`, one class per status so that the
 * HttpApi definition, OpenAPI and clients agree.
 * @since 0.1.0
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Issue } from "@waybill/core/Issue"
import type { ValidationError } from "@waybill/core/ValidationError"
import * as Schema from "effect/Schema"

const issues = Schema.Array(Issue)

const codes = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  409: "conflict",
  412: "precondition_failed",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "idempotency_key_reused",
  503: "unavailable"
} as const

type Status = keyof typeof codes

const errorClass =
  <Self>() =>
  <const S extends Status>(identifier: string, status: S) =>
    Schema.Class<Self>(identifier)(
      { code: Schema.tag(codes[status]), message: Schema.String, issues },
      HttpApiSchema.annotations({ status })
    )

/** 400: malformed JSON or a schema or rule violation; `issues` lists every violation. @since 0.1.0 */
export class BadRequest extends errorClass<BadRequest>()("BadRequest", 400) {}

/** 401: missing, malformed or unknown API key. @since 0.1.0 */
export class Unauthorized extends errorClass<Unauthorized>()("Unauthorized", 401) {}

/**
 * 403: a console token used beyond its scope (contract §5); never for another workspace's
 * resources, which stay 404.
 * @since 0.3.0
 */
export class Forbidden extends errorClass<Forbidden>()("Forbidden", 403) {}

/** 404: no such resource in the caller's workspace. @since 0.1.0 */
export class NotFound extends errorClass<NotFound>()("NotFound", 404) {}

/** 409: an action not allowed in the current status, or a conflicting request. @since 0.1.0 */
export class Conflict extends Schema.Class<Conflict>("Conflict")(
  { code: Schema.Literal("invalid_transition", "conflict"), message: Schema.String, issues },
  HttpApiSchema.annotations({ status: 409 })
) {}

/** 412: the draft's transport does not parse for product evaluation. @since 0.1.0 */
export class PreconditionFailed extends errorClass<PreconditionFailed>()("PreconditionFailed", 412) {}

/** 422: an `Idempotency-Key` sent again with another body or route. @since 0.1.0 */
export class IdempotencyKeyReused extends errorClass<IdempotencyKeyReused>()("IdempotencyKeyReused", 422) {}

/** 503: the database cannot be reached; nothing was written (sent with `Retry-After`). @since 0.1.0 */
export class Unavailable extends errorClass<Unavailable>()("Unavailable", 503) {}

/** The contract's code of a status, for responses produced outside the API definition. @since 0.1.0 */
export const codeForStatus = (status: number): string =>
  Object.hasOwn(codes, status) ? codes[status as Status] : status >= 500 ? "internal" : "bad_request"

/** The error body as plain JSON. @since 0.1.0 */
export interface ErrorBody {
  readonly code: string
  readonly message: string
  readonly issues: ReadonlyArray<Issue>
}

/** Builds a `BadRequest` from a domain `ValidationError`. @since 0.1.0 */
export const badRequest = (error: ValidationError): BadRequest =>
  new BadRequest({ message: error.message, issues: error.issues })

/** Builds a `NotFound` from a domain not-found error (its message names what was not found). @since 0.1.0 */
export const notFound = (error: { readonly message: string }): NotFound =>
  new NotFound({ message: error.message, issues: [] })
