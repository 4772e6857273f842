/** The contract's error bodies for what the API definition does not describe itself. */
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Issue from "@waybill/core/Issue"
import { fromIssues, ValidationError } from "@waybill/core/ValidationError"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { BadRequest, codeForStatus } from "../ApiError.js"
import { NO_BODY } from "./checkedRequest.js"

export const errorResponse = (status: number, message: string, issues: ReadonlyArray<Issue.Issue> = []) =>
  HttpServerResponse.unsafeJson({ code: codeForStatus(status), message, issues }, { status })

const unreadable = (error: HttpServerError.RequestError) =>
  errorResponse(400, error.description === NO_BODY ? NO_BODY : "The request body could not be read")

/** The 400 of a path, query or body the API definition's schemas refuse. */
export const decodeRefusal = (error: HttpApiDecodeError): BadRequest => {
  const invalid = fromIssues(
    Issue.tidy(error.issues.map((issue) => Issue.make(issue.path.map(String).join("."), issue.message)))
  )
  return new BadRequest({ message: invalid.message, issues: invalid.issues })
}

/** What a request is told while the database is unreachable (503). */
export const OUTAGE_MESSAGE = "The database cannot be reached; nothing was written. Try again shortly."

/** What a defect is logged as, with the defect; the caller is told only "Internal server error". */
export const UNEXPECTED_FAILURE = "Unexpected failure while handling a request"

/** Seconds a client is asked to wait before trying again while the database is unreachable. */
export const RETRY_AFTER_SECONDS = 5

/**
 * Failures the API definition does not describe, as the contract's body: decoding and validation
 * (400), unknown routes (404), an unreachable database (503, per `isOutage`), defects (500, logged).
 */
export const describeFailures = (isOutage: (defect: unknown) => boolean) => {
  // An outage is logged when it begins and at most once a minute while it lasts, not per request.
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
    }).pipe(Effect.as(errorResponse(503, OUTAGE_MESSAGE)))

  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E | BadRequest, R | HttpServerRequest.HttpServerRequest> =>
    Effect.catchAllCause(
      app,
      (
        cause
      ): Effect.Effect<HttpServerResponse.HttpServerResponse, E | BadRequest, HttpServerRequest.HttpServerRequest> => {
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) {
          const error: unknown = failure.value
          if (error instanceof HttpApiDecodeError) return Effect.fail(decodeRefusal(error))
          if (error instanceof ValidationError) {
            return Effect.fail(new BadRequest({ message: error.message, issues: error.issues }))
          }
          if (error instanceof HttpServerError.RequestError) return Effect.succeed(unreadable(error))
          if (error instanceof HttpServerError.RouteNotFound) {
            return Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
              errorResponse(404, `No route for ${request.method} ${request.url.split("?")[0]}`)
            )
          }
          return Effect.failCause(cause)
        }
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
        const defect = Cause.squash(cause)
        // The router reads a payload with `orDie`: an unreadable body is still a 400, not a 500.
        if (defect instanceof HttpServerError.RequestError) return Effect.succeed(unreadable(defect))
        if (isOutage(defect)) return outage(defect)
        return Effect.as(Effect.logError(UNEXPECTED_FAILURE, cause), errorResponse(500, "Internal server error"))
      }
    )
}
