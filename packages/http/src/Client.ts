/**
 * A typed client derived from the `HttpApi` definition the server serves: one method per
 * endpoint, and the contract's error bodies as typed failures (`BadRequest`, `Unauthorized`, ...).
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

/** Where the API is and the key to send. @since 0.1.0 */
export interface Options {
  /** Where the API is served, including any mount prefix (`https://tms.example.org/waybill`). */
  readonly baseUrl: string | URL
  /** Sent as `Authorization: Bearer <apiKey>` on every request. */
  readonly apiKey: string | Redacted.Redacted<string>
  /** Further changes to the underlying `HttpClient` (retries, timeouts, tracing headers...). */
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
}

/** Builds a client for `WaybillApi` over the `HttpClient` in context (e.g. `FetchHttpClient.layer`). @since 0.1.0 */
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
 * Sends `Idempotency-Key: <key>` with the requests of `effect`, so that a creating `POST` retried
 * with the same key and body gets the first answer again. Use one key per logical request.
 * @since 0.1.0
 */
export const withIdempotencyKey =
  (key: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locally(effect, currentIdempotencyKey, key)

/** The client's type: `client.<group>.<endpoint>(request)` for every endpoint of `WaybillApi`. @since 0.1.0 */
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
 * One readable line for any failure of a client call, for logs and command-line tools
 * (`401 unauthorized: A valid API key is required…`, `cannot reach http://…: …`).
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
