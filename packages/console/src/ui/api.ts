/**
 * The console's calls to the API, through the typed client of `@waybill/http` (derived from the
 * same `HttpApi` definition the server serves, so the page cannot drift from the API). Each call
 * is a Promise; a refusal becomes an `ApiFailure` with the contract's status, message and issues.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type { Issue } from "@waybill/core/Issue"
import * as ApiError from "@waybill/http/ApiError"
import * as Client from "@waybill/http/Client"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"

/** A refused or failed call: the contract's error body, or a network failure (status 0). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly issues: ReadonlyArray<Issue>
  ) {
    super(message)
  }
}

// The contract's status of each error body the client decodes.
const statuses: ReadonlyArray<readonly [abstract new (...args: never) => unknown, number]> = [
  [ApiError.BadRequest, 400],
  [ApiError.Unauthorized, 401],
  [ApiError.Forbidden, 403],
  [ApiError.NotFound, 404],
  [ApiError.Conflict, 409],
  [ApiError.IdempotencyKeyReused, 422],
  [ApiError.PreconditionFailed, 412]
]

const toFailure = (error: unknown): ApiFailure => {
  const known = statuses.find(([kind]) => error instanceof kind)
  if (known !== undefined) {
    const body = error as { readonly message: string; readonly issues: ReadonlyArray<Issue> }
    return new ApiFailure(known[1], body.message, body.issues)
  }
  return new ApiFailure(0, "The server could not be reached or gave an answer the console did not expect.", [])
}

/** The API's root: the page lives at `<root>/console`, wherever the server is mounted. */
export const apiRoot = (): string => `${location.origin}${location.pathname.replace(/\/console\/?$/, "")}`

/** The typed client for one API key. */
export type Api = Client.Client

/** Builds the typed client for a key. */
export const connect = (apiKey: string): Promise<Api> =>
  Effect.runPromise(Client.make({ baseUrl: apiRoot(), apiKey }).pipe(Effect.provide(FetchHttpClient.layer)))

/** The event a refused credential raises on `window`: the shell then signs out, whichever page called. */
export const UNAUTHORIZED = "waybill:unauthorized"

/** Runs one call of the client; resolves with its result or rejects with an `ApiFailure`. */
export const call = async <A, E>(effect: Effect.Effect<A, E>): Promise<A> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  const failure = toFailure(Option.getOrUndefined(Cause.failureOption(exit.cause)))
  if (failure.status === 401) dispatchEvent(new Event(UNAUTHORIZED))
  throw failure
}

/** Who the console is signed in as: `GET /console/api/whoami`. */
export interface Who {
  readonly auth: "api-key" | "console-token"
  readonly scope: "read" | "manage"
  readonly label: string | null
  readonly expiresAt: number | null
}

/** Builds the client for a credential and asks the API who it is; rejects as `call` does. */
export const signInWith = async (credential: string): Promise<{ readonly api: Api; readonly who: Who }> => {
  const api = await connect(credential)
  return { api, who: await call(api.console.whoami()) }
}
