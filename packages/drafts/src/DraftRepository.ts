/**
 * The storage port for drafts. Every method is scoped to a workspace; storage failures are
 * defects (500 without details).
 * @since 0.1.0
 */
import * as Cursor from "@waybill/core/Cursor"
import type { IdempotencyRecord } from "@waybill/core/Idempotency"
import type { WorkspaceId } from "@waybill/core/Workspace"
import type { NewEvent } from "@waybill/events/EventOutbox"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { Draft, DraftStatus } from "./Draft.js"

/** One page of `list`, newest first (by id); `after` is the last id of the previous page. @since 0.1.0 */
export interface ListQuery {
  readonly status?: DraftStatus | undefined
  readonly limit: number
  readonly after?: string | undefined
}

/** A page of drafts and the cursor of the next page (`null` on the last page). @since 0.1.0 */
export interface DraftPage {
  readonly data: ReadonlyArray<Draft>
  readonly nextCursor: string | null
}

/** @since 0.1.0 */
export class DraftRepository extends Context.Tag("@waybill/drafts/DraftRepository")<
  DraftRepository,
  {
    readonly insert: (workspaceId: WorkspaceId, draft: Draft) => Effect.Effect<void>
    /**
     * Optional: stores a new draft and its events atomically in one round trip; without it,
     * `insert` and `EventOutbox.publish` run in a `Transactor` transaction.
     */
    readonly insertPublishing?:
      | ((workspaceId: WorkspaceId, draft: Draft, events: ReadonlyArray<NewEvent>) => Effect.Effect<void>)
      | undefined
    /**
     * Optional: `insertPublishing` plus the request's idempotency record, atomically; `false`,
     * with nothing written, when the key is taken (an uncommitted holder is waited for).
     */
    readonly insertPublishingIdempotent?:
      | ((
          workspaceId: WorkspaceId,
          draft: Draft,
          events: ReadonlyArray<NewEvent>,
          record: IdempotencyRecord
        ) => Effect.Effect<boolean>)
      | undefined
    readonly get: (workspaceId: WorkspaceId, id: string) => Effect.Effect<Option.Option<Draft>>
    /** Reads and locks a draft until the transaction ends, so actions on it run one at a time. */
    readonly getForUpdate: (workspaceId: WorkspaceId, id: string) => Effect.Effect<Option.Option<Draft>>
    readonly update: (workspaceId: WorkspaceId, draft: Draft) => Effect.Effect<void>
    readonly delete: (workspaceId: WorkspaceId, id: string) => Effect.Effect<void>
    readonly list: (workspaceId: WorkspaceId, query: ListQuery) => Effect.Effect<DraftPage>
  }
>() {}

/** The opaque cursor that points after a draft; adapters build `nextCursor` with it. @since 0.1.0 */
export const encodeCursor = (draftId: string): string => Cursor.afterId("drf", draftId)

/** The draft id a cursor points after, or none when the cursor is not one of ours. @since 0.1.0 */
export const decodeCursor = (cursor: string): Option.Option<string> => Cursor.idAfter("drf", cursor)

/** Builds a page from up to `limit + 1` rows in list order; the extra one only signals a next page. @since 0.1.0 */
export const makePage = (rows: ReadonlyArray<Draft>, limit: number): DraftPage => {
  const data = rows.slice(0, limit)
  return {
    data,
    nextCursor: rows.length > limit && data.length > 0 ? encodeCursor(data[data.length - 1]!.id) : null
  }
}

/**
 * An in-memory repository; `getForUpdate` needs no lock, as the in-memory `Transactor` runs one
 * transaction at a time.
 * @since 0.1.0
 */
export const makeMemory = (): DraftRepository["Type"] => {
  const workspaces = new Map<string, Map<string, Draft>>()
  const drafts = (workspaceId: WorkspaceId): Map<string, Draft> =>
    workspaces.get(workspaceId) ?? workspaces.set(workspaceId, new Map()).get(workspaceId)!
  const get = (workspaceId: WorkspaceId, id: string) =>
    Effect.sync(() => Option.fromNullable(drafts(workspaceId).get(id)))
  return DraftRepository.of({
    insert: (workspaceId, draft) => Effect.sync(() => void drafts(workspaceId).set(draft.id, draft)),
    get,
    getForUpdate: get,
    update: (workspaceId, draft) =>
      Effect.sync(() => {
        const map = drafts(workspaceId)
        if (map.has(draft.id)) map.set(draft.id, draft)
      }),
    delete: (workspaceId, id) => Effect.sync(() => void drafts(workspaceId).delete(id)),
    list: (workspaceId, query) =>
      Effect.sync(() => {
        const rows = Array.from(drafts(workspaceId).values())
          .filter((draft) => query.status === undefined || draft.status === query.status)
          .filter((draft) => query.after === undefined || draft.id < query.after)
          .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
          .slice(0, query.limit + 1)
        return makePage(rows, query.limit)
      })
  })
}

/** An in-memory layer, for tests and embedders without storage. @since 0.1.0 */
export const layerMemory: Layer.Layer<DraftRepository> = Layer.sync(DraftRepository, makeMemory)
