/**
 * An in-process call of an endpoint's operation: the input decoded by the endpoint's own schemas
 * (what the router does with a request), the operation run, the answer as the HTTP body's JSON.
 */
import * as HttpApiError from "@effect/platform/HttpApiError"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Idempotency from "@waybill/core/Idempotency"
import type * as Issue from "@waybill/core/Issue"
import * as JsonInput from "@waybill/core/JsonInput"
import type { CurrentWorkspace } from "@waybill/core/Workspace"
import type { Actor } from "@waybill/drafts/Draft"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { WaybillApi } from "../Api.js"
import * as ApiError from "../ApiError.js"
import { WaybillError } from "../WaybillError.js"
import type { ApiRequirements } from "./apiLayer.js"
import { consoleOperations } from "./consoleHttp.js"
import { consoleTokensOperations } from "./consoleTokensHttp.js"
import { decodeRefusal, OUTAGE_MESSAGE, UNEXPECTED_FAILURE } from "./contractErrors.js"
import { draftsOperations, productsOperations } from "./draftsHttp.js"
import type { AnyOperations } from "./operations.js"
import { referenceDataOperations } from "./referenceDataHttp.js"
import { bodyRefusal } from "./requestChecks.js"
import { toursOperations } from "./toursHttp.js"
import { webhooksOperations } from "./webhooksHttp.js"

type Plain = Schema.Schema<unknown, unknown>

/** What a function hands the endpoint: path parameters, query, body, and the header-borne options. */
export interface CallInput {
  readonly path?: Record<string, unknown> | undefined
  readonly query?: unknown
  readonly body?: unknown
  readonly idempotencyKey?: unknown
  readonly actor?: Actor | undefined
  readonly base?: string | undefined
}

/** Calls `group.endpoint` in the workspace in context. */
export type Call = (target: string, input: CallInput) => Effect.Effect<unknown, WaybillError, CurrentWorkspace>

const apiErrors = [
  ApiError.BadRequest,
  ApiError.Unauthorized,
  ApiError.Forbidden,
  ApiError.NotFound,
  ApiError.Conflict,
  ApiError.PreconditionFailed,
  ApiError.IdempotencyKeyReused,
  ApiError.Unavailable
] as const

const statusOf = (error: object): number | undefined => {
  const found = apiErrors.find((type) => error instanceof type)
  return found === undefined ? undefined : HttpApiSchema.getStatusError(found)
}

const refused = (body: { readonly status: number; readonly message: string; readonly issues?: unknown }) =>
  new WaybillError(body as ConstructorParameters<typeof WaybillError>[0])

const badRequest = (error: ApiError.BadRequest) =>
  new WaybillError({ status: 400, code: error.code, message: error.message, issues: error.issues })

const fromParseError = (error: ParseResult.ParseError) =>
  Effect.flatMap(HttpApiError.HttpApiDecodeError.fromParseError(error), (decoded) =>
    Effect.fail(badRequest(decodeRefusal(decoded)))
  )

// Query values as a URL carries them: numbers and booleans as their text, so that the route's
// schema (`NumberFromString`, …) reads a host's `{ limit: 10 }` as it reads `?limit=10`.
const asUrlParams = (query: unknown): unknown => {
  if (query === undefined) return {}
  if (typeof query !== "object" || query === null || Array.isArray(query)) return query
  const params: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue
    params[key] = typeof value === "number" || typeof value === "boolean" ? String(value) : value
  }
  return params
}

// Path and query hold text the route stores or looks up: NUL and lone surrogates are refused as
// the HTTP checks refuse them, before any storage sees them.
const checkText = (value: unknown, path: string) => {
  const issues = JsonInput.issues(value, { path, jsonValues: true })
  return issues.length === 0
    ? Effect.void
    : Effect.fail(refused({ status: 400, message: `The request ${path} cannot be taken as given`, issues }))
}

const checkBody = (body: unknown) => {
  const refusal = bodyRefusal(JsonInput.inspect(body, { jsonValues: true }))
  return refusal === undefined ? Effect.void : Effect.fail(refused({ status: 400, ...refusal }))
}

const utf8 = new TextDecoder()

// A response of the operation's own (text written once, a kept idempotent answer): its JSON.
const bodyOf = (response: HttpServerResponse.HttpServerResponse): Effect.Effect<unknown, WaybillError> => {
  const body = response.body
  const value = body._tag === "Uint8Array" ? JSON.parse(utf8.decode(body.body)) : undefined
  return response.status >= 400 ? Effect.fail(refused({ status: response.status, ...value })) : Effect.succeed(value)
}

// The key travels as an argument here, not as the header the route's issue names.
const inProcessPath = (issue: Issue.Issue): Issue.Issue =>
  issue.path === Idempotency.header ? { ...issue, path: "idempotencyKey" } : issue

/** The caller of every operation, and how a failure becomes its `WaybillError`. */
export const operationsCaller = (isOutage: (defect: unknown) => boolean): Effect.Effect<Call, never, ApiRequirements> =>
  Effect.gen(function* () {
    const groups: Record<string, AnyOperations> = {
      drafts: yield* draftsOperations,
      products: yield* productsOperations,
      referenceData: yield* referenceDataOperations,
      tours: yield* toursOperations,
      webhooks: yield* webhooksOperations,
      console: yield* consoleOperations,
      consoleTokens: yield* consoleTokensOperations
    }
    const failure = (cause: Cause.Cause<unknown>): Effect.Effect<never, WaybillError> => {
      const error = Cause.failureOption(cause)
      if (Option.isSome(error) && error.value instanceof WaybillError) return Effect.fail(error.value)
      if (Option.isSome(error) && typeof error.value === "object" && error.value !== null) {
        const status = statusOf(error.value)
        if (status !== undefined) {
          const body = error.value as ApiError.ErrorBody
          return Effect.fail(
            new WaybillError({ status, code: body.code, message: body.message, issues: body.issues.map(inProcessPath) })
          )
        }
      }
      const defect = Cause.squash(cause)
      if (isOutage(defect)) return Effect.fail(new WaybillError({ status: 503, message: OUTAGE_MESSAGE }))
      return Effect.zipRight(
        Effect.logError(UNEXPECTED_FAILURE, cause),
        Effect.fail(new WaybillError({ status: 500, message: "Internal server error" }))
      )
    }
    const callers = new Map<string, (input: CallInput) => Effect.Effect<unknown, WaybillError, CurrentWorkspace>>()
    for (const [groupName, group] of Object.entries(WaybillApi.groups as Record<string, unknown>) as Array<
      [string, HttpApiGroup.HttpApiGroup.AnyWithProps]
    >) {
      const operations = groups[groupName]
      if (operations === undefined) continue
      for (const [name, endpoint] of Object.entries(group.endpoints)) {
        const operation = operations[name] as (input: object) => Effect.Effect<unknown, unknown, CurrentWorkspace>
        // Context-free schemas: every schema of the API is (the definition provides no services).
        const decodePath = Option.map(endpoint.pathSchema, (schema) => Schema.decodeUnknown(schema as Plain))
        const decodeQuery = Option.map(endpoint.urlParamsSchema, (schema) => Schema.decodeUnknown(schema as Plain))
        const decodeBody = Option.map(endpoint.payloadSchema, (schema) => Schema.decodeUnknown(schema as Plain))
        const encode = Schema.encodeUnknown(endpoint.successSchema as Plain)
        callers.set(`${groupName}.${name}`, (input) =>
          Effect.gen(function* () {
            const request: Record<string, unknown> = {
              idempotencyKey: input.idempotencyKey,
              actor: input.actor,
              base: input.base
            }
            if (Option.isSome(decodePath)) {
              yield* checkText(input.path, "path")
              request.path = yield* Effect.catchTag(decodePath.value(input.path), "ParseError", fromParseError)
            }
            if (Option.isSome(decodeQuery)) {
              const params = asUrlParams(input.query)
              yield* checkText(params, "query")
              request.urlParams = yield* Effect.catchTag(decodeQuery.value(params), "ParseError", fromParseError)
            }
            if (Option.isSome(decodeBody)) {
              yield* checkBody(input.body)
              request.payload = yield* Effect.catchTag(decodeBody.value(input.body), "ParseError", fromParseError)
            }
            const answer = yield* operation(request)
            return HttpServerResponse.isServerResponse(answer) ? yield* bodyOf(answer) : yield* encode(answer)
          }).pipe(Effect.catchAllCause(failure))
        )
      }
    }
    return (target, input) => {
      const caller = callers.get(target)
      return caller === undefined ? Effect.die(new Error(`No endpoint ${target}`)) : caller(input)
    }
  })
