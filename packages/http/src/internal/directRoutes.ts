/**
 * The API's two busiest endpoints, `POST /drafts` and `POST /events` (every draft a host creates
 * and every event it raises), answered ahead of the HttpApi router by the same handlers, with the
 * same authentication and the same error bodies (their failures go to the API's error encoding
 * like any handler's). For each request the router would copy the fiber's whole context, look the
 * route up, merge the handler group's context in, decode the payload (any JSON value for these
 * two) and provide the workspace through the security middleware: about a sixth of these
 * requests' CPU (docs/benchmarks.md, Throughput). The API definition is unchanged, so OpenAPI, the
 * reference and the typed client describe both endpoints as before. A request these routes do
 * not take (another spelling of the path, a query string, no body) goes to the router. The
 * request checks have authenticated the request and parsed its body, and run the route in place
 * of the router, with the workspace and nothing else provided: no request context of the
 * checks' own is built for it (docs/benchmarks.md).
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Idempotency } from "@waybill/core/Idempotency"
import type { Transactor } from "@waybill/core/Transactor"
import type { CurrentWorkspace } from "@waybill/core/Workspace"
import { DraftService } from "@waybill/drafts/DraftService"
import * as EventIntake from "@waybill/events/EventIntake"
import type { EventOutbox } from "@waybill/events/EventOutbox"
import { Dispatcher } from "@waybill/webhooks/Dispatcher"
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

/**
 * A direct route's answer to a request's checked body, in the workspace the checks
 * authenticated.
 */
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
  const idempotency = yield* Idempotency
  const dispatcher = yield* Dispatcher
  // Keyed by the exact URL: any other spelling the router would also accept is left to it.
  const routes: ReadonlyMap<string, Handler> = new Map([
    ["/drafts", createDraft(yield* DraftService, idempotency)],
    [
      "/events",
      publishEvent(yield* EventIntake.publisher, yield* EventIntake.idempotentPublisher, dispatcher, idempotency)
    ]
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
