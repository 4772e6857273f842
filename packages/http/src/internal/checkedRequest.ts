/**
 * What the request checks hand to the API through the context: the workspace, the checked body,
 * and a request that answers its body from it (the platform's request is never written to).
 */
import type * as Headers from "@effect/platform/Headers"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Multipart from "@effect/platform/Multipart"
import * as UrlParams from "@effect/platform/UrlParams"
import type { CurrentWorkspace } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import type * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/** A request body as the checks accepted it: its bytes, their text and its JSON value. */
export interface CheckedBody {
  readonly bytes: Uint8Array
  readonly text: string
  readonly value: unknown
}

/**
 * What the checks established for a request with a body method or a console token: its workspace
 * and its body (`undefined` when it had none). Absent for other requests.
 */
export class RequestChecks extends Context.Tag("@waybill/http/RequestChecks")<
  RequestChecks,
  { readonly workspace: CurrentWorkspace["Type"]; readonly body: CheckedBody | undefined }
>() {}

/** The description of the `RequestError` an endpoint taking a body gets for a request without one. */
export const NO_BODY = "The request has no body; this endpoint takes a JSON body"

const EMPTY = new Uint8Array(0)

/**
 * The platform's request with its body answered from the checked body: no second read or parse.
 * Without a body, `json` fails with `NO_BODY` (400) and the rest reads as empty.
 */
export class CheckedServerRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId

  constructor(
    readonly request: HttpServerRequest.HttpServerRequest,
    readonly body: CheckedBody | undefined
  ) {
    super()
  }

  get source(): unknown {
    return this.request.source
  }
  get url(): string {
    return this.request.url
  }
  get originalUrl(): string {
    return this.request.originalUrl
  }
  get method(): HttpMethod {
    return this.request.method
  }
  get cookies() {
    return this.request.cookies
  }
  get headers(): Headers.Headers {
    return this.request.headers
  }
  get remoteAddress(): Option.Option<string> {
    return this.request.remoteAddress
  }
  get upgrade() {
    return this.request.upgrade
  }

  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return Effect.succeed(this.body?.text ?? "")
  }
  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return this.body === undefined
      ? Effect.fail(new HttpServerError.RequestError({ request: this, reason: "Decode", description: NO_BODY }))
      : Effect.succeed(this.body.value)
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    return Effect.sync(() => {
      const bytes = this.body?.bytes ?? EMPTY
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
    })
  }
  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return this.body === undefined ? Stream.empty : Stream.succeed(this.body.bytes)
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.try({
      try: () => UrlParams.fromInput(new URLSearchParams(this.body?.text ?? "")),
      catch: (cause) => new HttpServerError.RequestError({ request: this, reason: "Decode", cause })
    })
  }
  get multipart() {
    return Effect.fail(new Multipart.MultipartError({ reason: "Parse", cause: "The request body is JSON" }))
  }
  get multipartStream() {
    return Stream.fail(new Multipart.MultipartError({ reason: "Parse", cause: "The request body is JSON" }))
  }

  modify(options: {
    readonly url?: string
    readonly headers?: Headers.Headers
    readonly remoteAddress?: string
  }): HttpServerRequest.HttpServerRequest {
    return new CheckedServerRequest(this.request.modify(options), this.body)
  }

  // Never the body, which may hold a webhook's secret, nor the query's values or the headers.
  toJSON(): unknown {
    return { _id: "@effect/platform/HttpServerRequest", method: this.method, url: this.url.split("?")[0] }
  }
}
