/**
 * `POST /drafts` and `POST /events`, the API's busiest endpoints, answered ahead of the HttpApi
 * router by the router's own handlers, which saves the router's work per request (about a sixth
 * of their CPU: docs/decisions/0103). Any other request goes to the router.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Idempotency } from "@waybill/core/Idempotency"
import type { Transactor } from "@waybill/core/Transactor"
import type { CurrentWorkspace } from "@waybill/core/Workspace"
import { DraftService } from "@waybill/drafts/DraftService"
import type { EventOutbox } from "@waybill/events/EventOutbox"
import type { Dispatcher } from "@waybill/webhooks/Dispatcher"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import type { BadRequest, Conflict, IdempotencyKeyReused } from "../ApiError.js"
import { createDraft } from "./draftsHttp.js"
import { keyOf } from "./idempotencyHttp.js"
import { publishEvent } from "./webhooksHttp.js"

type Handler = (
  payload: unknown,
  idempotencyKey: string | undefined
) => Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  BadRequest | IdempotencyKeyReused | Conflict,
  CurrentWorkspace
>

/** A direct route's answer to a request's checked body, in the workspace the checks authenticated. */
export type Route = (
  payload: unknown
) => Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  BadRequest | IdempotencyKeyReused | Conflict,
  CurrentWorkspace
>

/**
 * The direct routes, over the ports their handlers use: the route of a request, or `undefined`
 * for a request the router takes. The request checks (`requestChecks.ts`) run the route with the
 * body they checked and the workspace they authenticated, in place of the router.
 */
export const make: Effect.Effect<
  (request: HttpServerRequest.HttpServerRequest) => Route | undefined,
  never,
  DraftService | Dispatcher | EventOutbox | Transactor | Idempotency
> = Effect.gen(function* () {
  // Keyed by the exact URL: any other spelling the router would also accept is left to it.
  const routes: ReadonlyMap<string, Handler> = new Map([
    ["/drafts", createDraft(yield* DraftService, yield* Idempotency)],
    ["/events", yield* publishEvent]
  ])
  return (request) => {
    const handler = request.method === "POST" ? routes.get(request.url) : undefined
    if (handler === undefined) return undefined
    return (payload) =>
      Effect.withFiberRuntime((fiber) => {
        // What the router records on a traced request.
        const span = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
        if (Option.isSome(span) && span.value._tag === "Span") span.value.attribute("http.route", request.url)
        return Effect.interruptible(handler(payload, keyOf(request)))
      })
  }
})
