import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as Schema from "effect/Schema"
import { allErrors } from "./allErrors.js"

type Query = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/**
 * A paged list (`GET`, answering `page`, a `{ data, nextCursor }`): its query `params` report
 * every problem in one 400, not the first (contract §1), like every other request schema.
 */
export const pagedList =
  <A, I extends Query, P extends Schema.Schema.Any>(params: Schema.Schema<A, I>, page: P) =>
  <Name extends string, Path, UrlParams, Payload, Headers, Success, Error, R, RE>(
    endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, "GET", Path, UrlParams, Payload, Headers, Success, Error, R, RE>
  ) =>
    endpoint
      // `Query` is `ValidateUrlParams`' own check, which TypeScript cannot apply to a type parameter.
      .setUrlParams<Schema.Schema<A, I>>(params.annotations(allErrors) as never)
      .addSuccess(page)
