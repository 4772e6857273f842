/**
 * An endpoint's operation: its decoded input to its answer, in the caller's workspace. The router
 * serves every operation of a group (`serveGroup`) and the in-process API calls the same ones
 * (`InProcess`), so both answer alike by construction.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { CurrentWorkspace } from "@waybill/core/Workspace"
import type { Actor } from "@waybill/drafts/Draft"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as GlobalValue from "effect/GlobalValue"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { WaybillApi } from "../Api.js"
import type { BadRequest } from "../ApiError.js"
import { keyOf } from "./idempotencyHttp.js"

type Groups = typeof WaybillApi extends HttpApi.HttpApi<infer _Id, infer G, infer _E, infer _R> ? G : never

/** A group of the API by name (`"drafts"`, `"webhooks"`, …). */
export type GroupName = HttpApiGroup.HttpApiGroup.Name<Groups>

/** The endpoints of a group. */
export type EndpointOf<G extends GroupName> = HttpApiGroup.HttpApiGroup.EndpointsWithName<Groups, G>

/** What an operation takes: the endpoint's decoded path, query and body, and what the caller says besides. */
export type Input<E extends HttpApiEndpoint.HttpApiEndpoint.Any> = Omit<
  HttpApiEndpoint.HttpApiEndpoint.Request<E>,
  "request" | "headers"
> & {
  /** The request's `Idempotency-Key`, on the endpoints that take one. */
  readonly idempotencyKey?: string | undefined
  /** Who acts, for the records that name an actor; the API key's actor when absent. */
  readonly actor?: Actor | undefined
  /** Where the API is served (`https://host/waybill`, or a path in process), for answers that link to it. */
  readonly base?: string | undefined
}

/** An operation: a response of its own (kept idempotent answers, text written once) or the success value. */
export type Operation<E extends HttpApiEndpoint.HttpApiEndpoint.Any, GroupError = never> = (
  input: Input<E>
) => Effect.Effect<
  HttpApiEndpoint.HttpApiEndpoint.Success<E> | HttpServerResponse.HttpServerResponse,
  HttpApiEndpoint.HttpApiEndpoint.Error<E> | GroupError | BadRequest,
  CurrentWorkspace
>

/** Every operation of a group, by endpoint name. */
export type Operations<G extends GroupName> = {
  readonly [Name in EndpointOf<G>["name"]]: Operation<
    HttpApiEndpoint.HttpApiEndpoint.WithName<EndpointOf<G>, Name>,
    HttpApiGroup.HttpApiGroup.ErrorWithName<Groups, G>
  >
}

/** A group's operations in any group, for code that walks the API by name. */
export type AnyOperations = Readonly<
  Record<string, (input: never) => Effect.Effect<unknown, unknown, CurrentWorkspace>>
>

/** The path a host serves the API under (`Http.toWebHandler`'s `basePath`), `""` at the root. */
export const mountPath: FiberRef.FiberRef<string> = GlobalValue.globalValue(Symbol.for("@waybill/http/mountPath"), () =>
  FiberRef.unsafeMake("")
)

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/

// The origin the client addressed (a Fetch request's own URL, else the Host header; relative when
// neither reads as one) and the mount path.
const baseOf = (request: HttpServerRequest.HttpServerRequest, mount: string): string => {
  if (/^https?:\/\//.test(request.originalUrl)) return `${new URL(request.originalUrl).origin}${mount}`
  const host = request.headers.host
  return host !== undefined && HOST.test(host) ? `http://${host}${mount}` : mount
}

/**
 * The router's handlers of a group: each endpoint's operation, with the request's `Idempotency-Key`
 * and, with `withBase`, where the API is served.
 */
export const serveGroup = <G extends GroupName, R>(
  name: G,
  operations: Effect.Effect<Operations<G>, never, R>,
  options: { readonly withBase?: boolean } = {}
): Layer.Layer<HttpApiGroup.ApiGroup<"waybill", G>, never, Exclude<R, Scope.Scope>> =>
  HttpApiBuilder.group(
    WaybillApi,
    name,
    (handlers) =>
      Effect.map(operations, (built) => {
        // The builder's type tracks which endpoints are handled; the loop handles all of them.
        let served: { handle: (name: string, handler: (request: never) => unknown) => unknown } = handlers as never
        for (const [endpoint, operation] of Object.entries(built) as Array<
          [string, (input: Record<string, unknown>) => unknown]
        >) {
          served = served.handle(endpoint, ((
            request: Record<string, unknown> & { readonly request: HttpServerRequest.HttpServerRequest }
          ) =>
            options.withBase === true
              ? Effect.flatMap(
                  FiberRef.get(mountPath),
                  (mount) =>
                    operation({
                      ...request,
                      idempotencyKey: keyOf(request.request),
                      base: baseOf(request.request, mount)
                    }) as Effect.Effect<unknown, unknown, unknown>
                )
              : operation({ ...request, idempotencyKey: keyOf(request.request) })) as never) as typeof served
        }
        return served as never
      }) as never
  ) as never
