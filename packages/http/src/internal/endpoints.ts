import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as OpenApi from "@effect/platform/OpenApi"
import type * as Context from "effect/Context"
import type * as Schema from "effect/Schema"
import { allErrors } from "./allErrors.js"
import { idempotent } from "./openApi.js"

type Query = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** An endpoint's OpenAPI summary and description, each when given. */
export interface Docs {
  readonly summary?: string
  readonly description?: string
}

// Any endpoint: `annotate` answers the same endpoint type.
const documented = <E extends { readonly annotate: <I, S>(tag: Context.Tag<I, S>, value: S) => E }>(
  endpoint: E,
  docs: Docs
): E => {
  let annotated = endpoint
  if (docs.summary !== undefined) annotated = annotated.annotate(OpenApi.Summary, docs.summary)
  if (docs.description !== undefined) annotated = annotated.annotate(OpenApi.Description, docs.description)
  return annotated
}

/** A paged list answering `page`; its query `params` report every problem in one 400, not the first. */
export const pagedList =
  <A, I extends Query, P extends Schema.Schema.Any>(params: Schema.Schema<A, I>, page: P, docs: Docs = {}) =>
  <Name extends string, Path, UrlParams, Payload, Headers, Success, Error, R, RE>(
    endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, "GET", Path, UrlParams, Payload, Headers, Success, Error, R, RE>
  ) =>
    documented(
      endpoint
        // `Query` is `ValidateUrlParams`' own check, which TypeScript cannot apply to a type parameter.
        .setUrlParams<Schema.Schema<A, I>>(params.annotations(allErrors) as never)
        .addSuccess(page),
      docs
    )

/** A `POST` of `payload` answering `success` with `status`, that takes an `Idempotency-Key`. */
export const idempotentPost = <const Name extends string, P extends Schema.Schema.Any, S extends Schema.Schema.Any>(
  name: Name,
  path: HttpApiEndpoint.PathSegment,
  options: Docs & {
    readonly payload: P
    readonly success: S
    readonly status: number
  }
) =>
  idempotent(
    documented(
      HttpApiEndpoint.post(name, path)
        .setPayload(options.payload)
        .addSuccess(options.success, { status: options.status }),
      options
    )
  )
