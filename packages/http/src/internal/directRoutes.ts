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
 * request checks in front have authenticated the request and parsed its body.
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Idempotency } from "@waybill/core/Idempotency"
import type { Transactor } from "@waybill/core/Transactor"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import { DraftService } from "@waybill/drafts/DraftService"
import type { EventOutbox } from "@waybill/events/EventOutbox"
import { Dispatcher } from "@waybill/webhooks/Dispatcher"
import * as EventIntake from "@waybill/webhooks/EventIntake"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import type { BadRequest, Conflict, IdempotencyKeyReused } from "../ApiError.js"
import { RequestChecks } from "./checkedRequest.js"
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
 * The middleware serving the direct routes, over the ports their handlers use. It must run inside
 * the request checks (`requestChecks.ts`), whose workspace and checked body it takes.
 */
export const make: Effect.Effect<
  <E, R>(
    app: HttpApp.Default<E, R>
  ) => HttpApp.Default<E | BadRequest | IdempotencyKeyReused | Conflict, R | HttpServerRequest.HttpServerRequest>,
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
  return <E, R>(app: HttpApp.Default<E, R>) =>
    Effect.withFiberRuntime<
      HttpServerResponse.HttpServerResponse,
      E | BadRequest | IdempotencyKeyReused | Conflict,
      R | HttpServerRequest.HttpServerRequest
    >((fiber) => {
      const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
      const handler = request.method === "POST" ? routes.get(request.url) : undefined
      if (handler === undefined) return app
      const checked = Context.getOption(fiber.currentContext, RequestChecks)
      if (Option.isNone(checked) || checked.value.body === undefined) return app
      // What the router records on a traced request.
      const span = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
      if (Option.isSome(span) && span.value._tag === "Span") span.value.attribute("http.route", request.url)
      return Effect.interruptible(
        Effect.provideService(
          handler(checked.value.body.value, keyOf(request)),
          CurrentWorkspace,
          checked.value.workspace
        )
      )
    })
})
