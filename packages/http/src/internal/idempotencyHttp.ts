/**
 * `Idempotency-Key` over HTTP: the header read, the kept answer written as first sent (marked
 * `Idempotent-Replayed: true` on a replay), the service's refusals as the contract's error bodies.
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

type Refusal = ValidationError | Idempotency.IdempotencyKeyReused | Idempotency.IdempotencyKeyInFlight

const isRefusal = (error: unknown): error is Refusal =>
  Predicate.isTagged(error, "ValidationError") ||
  Predicate.isTagged(error, "IdempotencyKeyReused") ||
  Predicate.isTagged(error, "IdempotencyKeyInFlight")

const refuse = (error: Refusal): Effect.Effect<never, BadRequest | IdempotencyKeyReused | Conflict> => {
  switch (error._tag) {
    case "ValidationError":
      return Effect.fail(new BadRequest({ message: error.message, issues: error.issues }))
    case "IdempotencyKeyReused":
      return Effect.fail(new IdempotencyKeyReused({ message: error.message, issues: [] }))
    case "IdempotencyKeyInFlight":
      return Effect.fail(new Conflict({ code: "conflict", message: error.message, issues: [] }))
  }
}

/** An idempotent run over HTTP: its outcome as the kept answer; other failures pass on. */
export const answered =
  (idempotency: Idempotency.Idempotency["Type"]) =>
  <E, R>(
    run: Effect.Effect<Idempotency.Outcome<unknown>, E | Refusal, R>
  ): Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    Exclude<E, Refusal> | BadRequest | IdempotencyKeyReused | Conflict,
    Exclude<R, Idempotency.Idempotency>
  > =>
    run.pipe(
      Effect.map(respond),
      Effect.catchIf(isRefusal, refuse),
      Effect.provideService(Idempotency.Idempotency, idempotency)
    )
