/**
 * The port that makes one delivery attempt; implementations: `@waybill/sender` (docs/webhooks.md, Senders).
 * @since 0.1.0
 */
import type { Recorded } from "@waybill/core/Recorded"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { ErrorClass } from "./Delivery.js"

/** One attempt. `headers` carry the authentication (a secret): never log a request. @since 0.1.0 */
export interface SendRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** The stored body text, sent as UTF-8 bytes unchanged. */
  readonly body: string
  /** The whole attempt's deadline, DNS included: the sender enforces it, the dispatcher adds no timer. */
  readonly timeoutMs: number
}

/** The receiver answered. Any status: the dispatcher decides what counts as success. @since 0.1.0 */
export interface SendResponse {
  readonly statusCode: number
}

/** An attempt without a readable HTTP response; `message` never carries headers or body. @since 0.1.0 */
export class SendError extends Schema.TaggedError<SendError>("@waybill/webhooks/SendError")("SendError", {
  reason: ErrorClass,
  message: Schema.String
}) {}

/** @since 0.1.0 */
export class HttpSender extends Context.Tag("@waybill/webhooks/HttpSender")<
  HttpSender,
  { readonly send: (request: SendRequest) => Effect.Effect<SendResponse, SendError> }
>() {}

/** A request the scripted sender received, and when (epoch milliseconds, `Clock`). @since 0.1.0 */
export interface Received {
  readonly request: SendRequest
  readonly at: number
}

/** What the scripted sender has received, in order. @since 0.1.0 */
export class SentRequests extends Context.Tag("@waybill/webhooks/SentRequests")<SentRequests, Recorded<Received>>() {}

/** An in-memory sender for tests: records requests, answers with `respond`, times out on the `Clock`. @since 0.1.0 */
export const layerScripted = (
  respond: (request: SendRequest, index: number) => Effect.Effect<SendResponse, SendError>
): Layer.Layer<HttpSender | SentRequests> =>
  Layer.effectContext(
    Effect.sync(() => {
      const received: Array<Received> = []
      const sender = HttpSender.of({
        send: (request) =>
          Effect.flatMap(Clock.currentTimeMillis, (at) => {
            const index = received.length
            received.push({ request, at })
            return Effect.timeoutFail(respond(request, index), {
              duration: request.timeoutMs,
              onTimeout: () =>
                new SendError({ reason: "timeout", message: `No response within ${request.timeoutMs} ms` })
            })
          })
      })
      return Context.make(HttpSender, sender).pipe(Context.add(SentRequests, { all: Effect.sync(() => [...received]) }))
    })
  )
