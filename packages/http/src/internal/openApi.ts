import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import * as OpenApi from "@effect/platform/OpenApi"
import * as JSONSchema from "effect/JSONSchema"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { Conflict, IdempotencyKeyReused } from "../ApiError.js"

// Effect stamps schemas of `unknown`, `{}` and `object` with an `$id` per use; OpenAPI 3.1 requires
// every `$id` to be unique, so these meaningless ones are dropped.
const isSyntheticId = (key: string, value: unknown) =>
  key === "$id" && typeof value === "string" && value.startsWith("/schemas/")

export const withoutSyntheticIds = <A>(value: A): A => {
  if (Array.isArray(value)) return value.map(withoutSyntheticIds) as A
  if (typeof value !== "object" || value === null) return value
  const result: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    if (!isSyntheticId(key, child)) result[key] = withoutSyntheticIds(child)
  }
  return result as A
}

/** Component schemas that `documentedUnknown` bodies refer to, merged in by the API's transform. */
export const extraComponents: Record<string, unknown> = {}

/**
 * A body accepted as any JSON value, so the domain validator reports every problem without
 * echoing secrets, but documented and typed as `schema`. `checkOnEncode` makes the typed client
 * check it; bodies with secrets leave it off, so no client-side parse error can quote one.
 */
export const documentedUnknown = <A, I>(
  schema: Schema.Schema<A, I>,
  identifier: string,
  options?: { readonly checkOnEncode?: boolean }
): Schema.Schema<I> => {
  const jsonSchema = JSONSchema.fromAST(schema.ast, {
    definitions: extraComponents as Record<string, JSONSchema.JsonSchema7>,
    definitionPath: "#/components/schemas/",
    target: "openApi3.1"
  })
  const lenient = options?.checkOnEncode
    ? Schema.transformOrFail(Schema.Unknown, Schema.Unknown, {
        strict: true,
        decode: ParseResult.succeed,
        encode: (value) => ParseResult.encodeUnknown(schema)(value)
      })
    : Schema.Unknown
  return lenient.annotations({ identifier, jsonSchema }) as unknown as Schema.Schema<I>
}

/** Adds `extraComponents` to a document, refusing to replace a different schema of the same name. */
export const withExtraComponents = <D extends { readonly components?: unknown }>(document: D): D => {
  const components = (document.components ?? {}) as { readonly schemas?: Record<string, unknown> }
  const schemas = { ...components.schemas }
  for (const [name, value] of Object.entries(extraComponents)) {
    if (name in schemas && JSON.stringify(schemas[name]) !== JSON.stringify(value)) {
      throw new Error(`OpenAPI component schema ${name} is already defined differently`)
    }
    schemas[name] = value
  }
  return { ...document, components: { ...components, schemas } }
}

const idempotencyKeyParameter = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "1–255 visible ASCII characters, per workspace. The first request with a key is processed as usual; a 2xx answer is kept for at least 24 hours, and the same key, route and JSON body (whatever its spacing) gets it again with `Idempotent-Replayed: true`, changing nothing. Another body or route: 422 idempotency_key_reused; while the first is being processed: 409 conflict; a 4xx or 5xx answer keeps nothing.",
  schema: { type: "string", minLength: 1, maxLength: 255 }
} as const

/**
 * Documents the `Idempotency-Key` header. It is not declared as the endpoint's headers, which
 * would make every typed-client call name a `headers` object.
 */
export const documentIdempotencyKey = (operation: Record<string, unknown>): Record<string, unknown> => ({
  ...operation,
  parameters: [...((operation.parameters as ReadonlyArray<unknown> | undefined) ?? []), idempotencyKeyParameter]
})

/** An endpoint that takes an `Idempotency-Key`: its 422 and 409, and the header documented. */
export const idempotent = <
  Name extends string,
  Method extends HttpMethod,
  Path,
  UrlParams,
  Payload,
  Headers,
  Success,
  Error,
  R,
  RE
>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
) => endpoint.addError(IdempotencyKeyReused).addError(Conflict).annotate(OpenApi.Transform, documentIdempotencyKey)
