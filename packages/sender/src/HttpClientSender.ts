/**
 * An `HttpSender` over `@effect/platform`'s `HttpClient`, the SSRF rules checked before each request.
 * What it cannot guarantee beside the undici `WebhookSender`: docs/webhooks.md ("Senders").
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type { ErrorClass } from "@waybill/webhooks/Delivery"
import { HostResolver } from "@waybill/webhooks/HostResolver"
import { HttpSender, SendError, type SendRequest, type SendResponse } from "@waybill/webhooks/HttpSender"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Classify from "./internal/classify.js"
import { makeTargets, refusalOfName, type Target } from "./internal/target.js"

/** @since 0.1.0 */
export interface Options {
  /** Allows non-global targets (`WAYBILL_ALLOW_PRIVATE_TARGETS`); the SSRF check is skipped. */
  readonly allowPrivateTargets: boolean
  /** Response body bytes read at most before the request is aborted. Default 4096. */
  readonly maxResponseBytes?: number | undefined
  /** Your fetch `RequestInit`: each request gets its own (`redirect: "manual"`), replacing the layer's. */
  readonly fetchInit?: globalThis.RequestInit | undefined
}

const failure = (reason: ErrorClass, message: string) => new SendError({ reason, message: message.slice(0, 300) })

const fail = (reason: ErrorClass, message: string) => Effect.fail(failure(reason, message))

// The innermost cause says what happened: fetch's own error is only "fetch failed".
const innermost = (error: unknown): unknown => {
  let current = error
  for (let depth = 0; depth < 8 && current instanceof Error && current.cause instanceof Error; depth++) {
    current = current.cause
  }
  return current
}

const requestFailure = (error: HttpClientError.HttpClientError, headers: Readonly<Record<string, string>>) => {
  if (error._tag === "ResponseError") return failure("http", error.message)
  if (error.reason === "InvalidUrl") return failure("connect", "The target URL does not parse")
  const cause = error.cause instanceof Error ? error.cause : new Error(String(error.cause))
  const inner = innermost(cause)
  return failure(
    error.reason === "Encode" ? "http" : Classify.classify(cause),
    Classify.describeError(inner instanceof Error ? inner : cause, headers)
  )
}

/** Builds the sender over the `HttpClient` and the `HostResolver` in context. @since 0.1.0 */
export const make = (
  options: Options
): Effect.Effect<HttpSender["Type"], never, HttpClient.HttpClient | HostResolver> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const resolver = yield* HostResolver
    const maxBytes = options.maxResponseBytes ?? 4096
    const targetOf = makeTargets(options.allowPrivateTargets)
    const fetchInit: globalThis.RequestInit = { ...options.fetchInit, redirect: "manual" }
    const encoder = new TextEncoder()

    // The client resolves the name again to connect: what that leaves open is in docs/webhooks.md.
    const vet = (target: Extract<Target, { _tag: "Target" }>): Effect.Effect<void, SendError> =>
      options.allowPrivateTargets || target.isLiteral
        ? Effect.void
        : Effect.flatMap(resolver.resolve(target.host), (addresses) => {
            if (addresses.length === 0) return fail("dns", `getaddrinfo ENOTFOUND ${target.host}`)
            const refusal = refusalOfName(target.host, addresses)
            return refusal === undefined ? Effect.void : fail("ssrf", refusal)
          })

    // At most `maxBytes` within the deadline, then the request is aborted; the status answers either way.
    const drain = (response: HttpClientResponse.HttpClientResponse, remainingMs: number) =>
      response.stream.pipe(
        Stream.mapAccum(0, (read, chunk: Uint8Array) => [read + chunk.length, read + chunk.length]),
        Stream.takeUntil((read) => read >= maxBytes),
        Stream.runDrain,
        Effect.timeout(Math.max(1, remainingMs)),
        Effect.ignore
      )

    const send = (request: SendRequest): Effect.Effect<SendResponse, SendError> => {
      const target = targetOf(request.url)
      if (target._tag === "Refused") return fail(target.reason, target.message)
      const outgoing = HttpClientRequest.post(target.url).pipe(
        HttpClientRequest.setHeaders(request.headers),
        HttpClientRequest.bodyUint8Array(
          encoder.encode(request.body),
          request.headers["Content-Type"] ?? request.headers["content-type"] ?? "application/json"
        )
      )
      return Effect.gen(function* () {
        const startedAt = yield* Clock.currentTimeMillis
        const response = yield* Effect.zipRight(
          vet(target),
          client.execute(outgoing).pipe(
            Effect.mapError((error) => requestFailure(error, request.headers)),
            Effect.provideService(FetchHttpClient.RequestInit, fetchInit)
          )
        ).pipe(
          // One deadline up to the response's head, the name's check included.
          Effect.timeoutFail({
            duration: request.timeoutMs,
            onTimeout: () => failure("timeout", `No response within ${request.timeoutMs} ms`)
          })
        )
        const now = yield* Clock.currentTimeMillis
        yield* drain(response, request.timeoutMs - (now - startedAt))
        return { statusCode: response.status }
      })
    }

    return HttpSender.of({ send })
  })

/**
 * The sender as a layer, over the `HttpClient` and `HostResolver` you provide (for example
 * `FetchHttpClient.layer` and `WebhookSender.layerResolver`).
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<HttpSender, never, HttpClient.HttpClient | HostResolver> =>
  Layer.effect(HttpSender, make(options))
