/**
 * A typed client for TypeScript consumers, derived from the same `HttpApi` definition the server
 * serves: one method per endpoint (`client.<group>.<endpoint>(request)`), request payloads
 * encoded and responses decoded with the contract's schemas, and the contract's error bodies
 * returned as typed failures (`BadRequest`, `Unauthorized`, `NotFound`, ...).
 * @since 0.1.0
 */
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as ParseResult from "effect/ParseResult"
import type * as Redacted from "effect/Redacted"
import { WaybillApi } from "./Api.js"

/**
 * @since 0.1.0
 */
export interface Options {
  /**
   * Where the API is served, including any mount prefix (`https://tms.example.org/waybill`).
   */
  readonly baseUrl: string | URL
  /** Sent as `Authorization: Bearer <apiKey>` on every request. */
  readonly apiKey: string | Redacted.Redacted<string>
  /** Further changes to the underlying `HttpClient` (retries, timeouts, tracing headers...). */
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
}

/**
 * Builds a client for `WaybillApi` over the `HttpClient` in context (`FetchHttpClient.layer` in
 * browsers, Deno, Bun and Node 18+; `NodeHttpClient.layer` from `@effect/platform-node` also
 * fits). Requests to endpoints that need no key (`/health`) carry it all the same, harmlessly.
 *
 * @example
 * ```ts
 * import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
 * import * as ApiError from "@waybill/http/ApiError"
 * import * as Client from "@waybill/http/Client"
 * import * as Effect from "effect/Effect"
 *
 * const program = Effect.gen(function* () {
 *   const waybill = yield* Client.make({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.WAYBILL_API_KEY! })
 *   const shapes = yield* waybill.referenceData.transportShapes()
 *   const draft = yield* waybill.drafts.create({
 *     payload: { origin: "manual", status: "draft", transportShapeId: shapes.data[0]!.id }
 *   })
 *   return draft.id
 * }).pipe(
 *   // The contract's error bodies are typed failures: instances of the `ApiError` classes.
 *   Effect.catchIf(
 *     (error) => error instanceof ApiError.Unauthorized,
 *     (error) => Effect.die(`check WAYBILL_API_KEY: ${error.message}`)
 *   ),
 *   Effect.provide(FetchHttpClient.layer)
 * )
 * ```
 * @since 0.1.0
 */
export const make = (options: Options) =>
  HttpApiClient.make(WaybillApi, {
    baseUrl: options.baseUrl,
    transformClient: (client) => {
      const authenticated = HttpClient.mapRequestEffect(
        HttpClient.mapRequest(client, HttpClientRequest.bearerToken(options.apiKey)),
        (request) =>
          Effect.map(FiberRef.get(currentIdempotencyKey), (key) =>
            key === undefined ? request : HttpClientRequest.setHeader(request, "idempotency-key", key)
          )
      )
      return options.transformClient === undefined ? authenticated : options.transformClient(authenticated)
    }
  })

const currentIdempotencyKey = FiberRef.unsafeMake<string | undefined>(undefined)

/**
 * Sends `Idempotency-Key: <key>` with the requests of `effect` (contract §8): `POST /drafts`,
 * `POST /events` and `POST /webhooks` then create once per key, and a retry with the same key and
 * body gets the first answer again (422 `IdempotencyKeyReused` for another body, 409 `Conflict`
 * while the first is still being processed). A replay decodes like the first answer; call with
 * `withResponse: true` to read its `Idempotent-Replayed: true` header.
 *
 * @example
 * ```ts
 * import * as Client from "@waybill/http/Client"
 * import * as Effect from "effect/Effect"
 *
 * declare const waybill: Client.Client
 * const key = crypto.randomUUID() // one per logical request, kept for its retries
 * const publish = waybill.webhooks
 *   .publish({ payload: { type: "tour-deleted", payload: { tourId: "tour_1" } } })
 *   .pipe(Client.withIdempotencyKey(key), Effect.retry({ times: 3 }))
 * ```
 * @since 0.1.0
 */
export const withIdempotencyKey =
  (key: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locally(effect, currentIdempotencyKey, key)

/**
 * The client's type: `client.<group>.<endpoint>(request)` for every endpoint of `WaybillApi`.
 * @since 0.1.0
 */
export type Client = Effect.Effect.Success<ReturnType<typeof make>>

const statusOf: Record<string, number> = {
  bad_request: 400,
  unauthorized: 401,
  not_found: 404,
  invalid_transition: 409,
  conflict: 409,
  precondition_failed: 412,
  idempotency_key_reused: 422,
  unavailable: 503
}

const firstLine = (text: string) => text.split("\n", 1)[0] ?? ""

/**
 * One readable line for any failure of a client call, for logs and command-line tools: the
 * contract's error body (`401 unauthorized: A valid API key is required…`), a server that could
 * not be reached (`cannot reach http://…: connect ECONNREFUSED 127.0.0.1:3000`), an unexpected
 * status or an answer that does not decode.
 *
 * @example
 * ```ts
 * Effect.runPromise(program.pipe(Effect.tapError((error) => Effect.logError(Client.describeError(error)))))
 * ```
 * @since 0.1.0
 */
export const describeError = (error: unknown): string => {
  if (typeof error !== "object" || error === null) return String(error)
  if (ParseResult.isParseError(error)) return `the answer does not match the API: ${firstLine(error.message)}`
  const { _tag, code, message } = error as { _tag?: unknown; code?: unknown; message?: unknown }
  if (typeof code === "string" && typeof message === "string") {
    return `${statusOf[code] ?? "error"} ${code}: ${message}`
  }
  if (_tag === "RequestError") {
    const { request, cause } = error as { request: { url: string }; cause?: unknown }
    const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause : cause).message : String(cause)
    return `cannot reach ${request.url}: ${firstLine(reason)}`
  }
  if (_tag === "ResponseError") {
    const { response, request } = error as { response: { status: number }; request: { url: string } }
    return `unexpected answer ${response.status} from ${request.url}`
  }
  return typeof message === "string" && message !== "" ? firstLine(message) : String(error)
}
