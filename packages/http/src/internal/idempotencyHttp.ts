/**
 * `Idempotency-Key` over HTTP (contract §8) for `POST /drafts`, `POST /events` and
 * `POST /webhooks`: the header read from the request, the kept answer written as it was first
 * sent (with `Idempotent-Replayed: true` on a replay), the service's refusals as the contract's
 * error bodies. (The endpoints' OpenAPI part is `openApi.idempotent`.)
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Idempotency from "@waybill/core/Idempotency"
import type { ValidationError } from "@waybill/core/ValidationError"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { BadRequest, Conflict, IdempotencyKeyReused } from "../ApiError.js"

/** The request's `Idempotency-Key`, if it has one (several are joined by the platform, then refused). */
export const keyOf = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  request.headers["idempotency-key"]

const replayedHeaders = { [Idempotency.replayedHeader]: "true" } as const

/** The answer of an idempotent request: the kept status and body, the same on every replay. */
export const respond = (outcome: Idempotency.Outcome<unknown>): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(outcome.body, {
    status: outcome.status,
    contentType: "application/json",
    ...(outcome.replayed ? { headers: replayedHeaders } : {})
  })

/** The service's refusals of an idempotent request as the contract's error bodies. */
export const refusals = {
  ValidationError: (error: ValidationError) =>
    Effect.fail(new BadRequest({ message: error.message, issues: error.issues })),
  IdempotencyKeyReused: (error: Idempotency.IdempotencyKeyReused) =>
    Effect.fail(new IdempotencyKeyReused({ message: error.message, issues: [] })),
  IdempotencyKeyInFlight: (error: Idempotency.IdempotencyKeyInFlight) =>
    Effect.fail(new Conflict({ code: "conflict", message: error.message, issues: [] }))
} as const
