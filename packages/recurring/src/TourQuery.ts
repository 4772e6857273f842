/**
 * The read port for generated tours (`GET /tours/{id}`, `GET /tours?draftId=&limit=&cursor=`).
 * Every read is scoped to a workspace: another workspace's tours are never found.
 * @since 0.1.0
 */
import * as Cursor from "@waybill/core/Cursor"
import * as Issue from "@waybill/core/Issue"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Tour } from "./Tour.js"
import { MemoryTours } from "./TourRepository.js"

/** Default and largest page size of `list`. @since 0.1.0 */
export const pageSize = { default: 20, max: 100 } as const

/** The URL parameters of `GET /tours`; without `draftId` every tour of the workspace is listed. @since 0.1.0 */
export const ListParams = Schema.Struct({
  draftId: Schema.optionalWith(Schema.String.annotations({ description: "Only the tours of this recurring master" }), {
    exact: true
  }),
  // Exact: a present but bad value gets one issue, not a second "expected undefined".
  limit: Schema.optionalWith(
    Schema.NumberFromString.annotations({
      description: `Page size: an integer from 1 to ${pageSize.max} (default ${pageSize.default})`,
      message: () => ({ message: "must be an integer", override: true })
    }),
    { exact: true }
  ),
  cursor: Schema.optionalWith(Schema.String.annotations({ description: "The nextCursor of the previous page" }), {
    exact: true
  })
}).annotations({ identifier: "ListToursParams" })

/** @since 0.1.0 */
export type ListParams = typeof ListParams.Type

/** Where a page continues: after this tour in list order. @since 0.1.0 */
export interface Position {
  readonly triggerAt: number
  readonly id: string
}

/**
 * What an adapter is asked for: `limit` tours after `after` in `compare` order, of one master or
 * of all.
 * @since 0.1.0
 */
export interface ListQuery {
  readonly draftId?: string | undefined
  readonly limit: number
  readonly after?: Position | undefined
}

/** A page of tours and the cursor of the next page (`null` on the last page). @since 0.1.0 */
export const TourPage = Schema.Struct({
  data: Schema.Array(Tour),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "TourPage" })

/** @since 0.1.0 */
export type TourPage = typeof TourPage.Type

/** @since 0.1.0 */
export class TourQuery extends Context.Tag("@waybill/recurring/TourQuery")<
  TourQuery,
  {
    readonly get: (workspaceId: WorkspaceId, id: string) => Effect.Effect<Option.Option<Tour>>
    readonly list: (workspaceId: WorkspaceId, query: ListQuery) => Effect.Effect<TourPage>
  }
>() {}

/** The opaque cursor that points after a tour; adapters build `nextCursor` with it. @since 0.1.0 */
export const encodeCursor = (position: Position): string => Cursor.encode(`tour:${position.triggerAt}:${position.id}`)

/** The position a cursor points after, or none when the cursor is not one of ours. @since 0.1.0 */
export const decodeCursor = (cursor: string): Option.Option<Position> =>
  Option.flatMap(Cursor.decode(cursor), (text) => {
    const match = /^tour:(0|[1-9]\d{0,15}):([!-~]{1,100})$/.exec(text)
    return match === null ? Option.none() : Option.some({ triggerAt: Number(match[1]), id: match[2]! })
  })

/** Builds a page from up to `limit + 1` tours in list order; the extra one only signals a next page. @since 0.1.0 */
export const makePage = (rows: ReadonlyArray<Tour>, limit: number): TourPage => {
  const data = rows.slice(0, limit)
  const last = data[data.length - 1]
  return { data, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(last) : null }
}

/** Checks the URL parameters of a list request: the adapter query, or issues at `limit`, `cursor`. @since 0.1.0 */
export const toListQuery = (params: ListParams): Either.Either<ListQuery, ReadonlyArray<Issue.Issue>> => {
  const issues: Array<Issue.Issue> = []
  const limit = params.limit ?? pageSize.default
  if (!Number.isInteger(limit) || limit < 1 || limit > pageSize.max) {
    issues.push(Issue.make("limit", `must be an integer from 1 to ${pageSize.max}`))
  }
  const after = params.cursor === undefined ? Option.none() : decodeCursor(params.cursor)
  if (params.cursor !== undefined && Option.isNone(after)) {
    issues.push(Issue.make("cursor", "is not a cursor returned by this list"))
  }
  return issues.length > 0
    ? Either.left(issues)
    : Either.right({ draftId: params.draftId, limit, after: Option.getOrUndefined(after) })
}

/** The list order: trigger instant, then id. @since 0.1.0 */
export const compare = (a: Position, b: Position): number =>
  a.triggerAt !== b.triggerAt ? a.triggerAt - b.triggerAt : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

/** Reads the in-memory `TourRepository` (provide `TourRepository.layerMemory`). @since 0.1.0 */
export const layerMemory: Layer.Layer<TourQuery, never, MemoryTours> = Layer.effect(
  TourQuery,
  Effect.map(MemoryTours, (memory) => {
    const ofWorkspace = (workspaceId: WorkspaceId) =>
      Effect.map(memory.all, (all) => all.filter((stored) => stored.workspaceId === workspaceId).map((s) => s.tour))
    return TourQuery.of({
      get: (workspaceId, id) =>
        Effect.map(ofWorkspace(workspaceId), (tours) => Option.fromNullable(tours.find((tour) => tour.id === id))),
      list: (workspaceId, query) =>
        Effect.map(ofWorkspace(workspaceId), (tours) =>
          makePage(
            tours
              .filter((tour) => query.draftId === undefined || tour.draftId === query.draftId)
              .filter((tour) => query.after === undefined || compare(tour, query.after) > 0)
              .sort(compare)
              .slice(0, query.limit + 1),
            query.limit
          )
        )
    })
  })
)
