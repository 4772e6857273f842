/** Pages of webhooks, deliveries and alerts (contract §1), built by `make` so every store pages alike. @since 0.1.0 */
import * as Cursor from "@waybill/core/Cursor"
import type * as Id from "@waybill/core/Id"
import * as Issue from "@waybill/core/Issue"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** A page and the cursor of the next one (`null` on the last page). @since 0.1.0 */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly nextCursor: string | null
}

/** The schema of a page of `item`. @since 0.1.0 */
export const schema = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Struct({ data: Schema.Array(item), nextCursor: Schema.NullOr(Schema.String) })

/** Page sizes: `limit` is 1–100, 20 when omitted. @since 0.1.0 */
export const size = { default: 20, max: 100 } as const

/** One page to read: at most `limit` items older than the id `after` (none for the first page). @since 0.1.0 */
export interface Query {
  readonly limit: number
  readonly after: string | undefined
}

/** The cursor that points after the item with this id. @since 0.1.0 */
export const encodeCursor = (prefix: Id.Prefix, id: string): string => Cursor.afterId(prefix, id)

/** The id a cursor points after, or none when it is not a cursor of this kind of list. @since 0.1.0 */
export const decodeCursor = (prefix: Id.Prefix, cursor: string): Option.Option<string> => Cursor.idAfter(prefix, cursor)

/** Builds a page from up to `limit + 1` rows, newest first: the extra row says a next page exists. @since 0.1.0 */
export const make = <A>(
  prefix: Id.Prefix,
  rows: ReadonlyArray<A>,
  limit: number,
  idOf: (row: A) => string
): Page<A> => {
  const data = rows.slice(0, limit)
  return {
    data,
    nextCursor: rows.length > limit && data.length > 0 ? encodeCursor(prefix, idOf(data[data.length - 1]!)) : null
  }
}

/** The paging parameters of a list request as the HTTP layer decodes them from the URL. @since 0.1.0 */
export interface Params {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** Checks paging parameters: every issue (`limit`, `cursor`), or the store query. @since 0.1.0 */
export const query = (
  prefix: Id.Prefix,
  params: Params
): { readonly issues: ReadonlyArray<Issue.Issue>; readonly query: Query } => {
  const issues: Array<Issue.Issue> = []
  const limit = params.limit
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > size.max)) {
    issues.push(Issue.make("limit", `must be an integer from 1 to ${size.max}`))
  }
  const after = params.cursor === undefined ? Option.none<string>() : decodeCursor(prefix, params.cursor)
  if (params.cursor !== undefined && Option.isNone(after)) {
    issues.push(Issue.make("cursor", "is not a cursor returned by this list"))
  }
  return { issues, query: { limit: limit ?? size.default, after: Option.getOrUndefined(after) } }
}
