/**
 * Generated tours on PostgreSQL: the `TourRepository` port (insert-if-absent by
 * `(draft_id, trigger_at)`) and the `TourQuery` read port.
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { Tour } from "@waybill/recurring/Tour"
import { makePage, TourQuery } from "@waybill/recurring/TourQuery"
import { TourRepository } from "@waybill/recurring/TourRepository"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { pageOfDocuments } from "./internal/documents.js"

const encode = Schema.encodeSync(Tour)
const decode = Schema.decodeUnknownSync(Tour)

// Six parameters a row: far below PostgreSQL's 65,535 a statement, whatever the generator's batch.
const ROWS_PER_STATEMENT = 1000

/**
 * Both ports over one `SqlClient`; writes run in the caller's transaction, so a tour, its event
 * and the master's cursor commit together.
 * @since 0.1.0
 */
export const layer: Layer.Layer<TourRepository | TourQuery, never, SqlClient.SqlClient> = Layer.effectContext(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insertChunk = (workspaceId: WorkspaceId, tours: ReadonlyArray<Tour>) =>
      Effect.map(
        sql<{ id: string }>`
          INSERT INTO tours ${sql.insert(
            tours.map((tour) => ({
              workspace_id: workspaceId,
              id: tour.id,
              draft_id: tour.draftId,
              trigger_at: tour.triggerAt,
              created_at: tour.createdAt,
              document: JSON.stringify(encode(tour))
            }))
          )}
          ON CONFLICT (draft_id, trigger_at) DO NOTHING
          RETURNING id`,
        (rows) => {
          // Only the rows actually inserted come back; a tour whose key was taken is not new.
          const inserted = new Set(rows.map((row) => row.id))
          return tours.filter((tour) => inserted.has(tour.id))
        }
      )

    const repository = TourRepository.of({
      insertIfAbsent: ({ workspaceId }, tours) =>
        tours.length === 0
          ? Effect.succeed([])
          : Effect.forEach(Arr.chunksOf(tours, ROWS_PER_STATEMENT), (chunk) => insertChunk(workspaceId, chunk)).pipe(
              Effect.map(Arr.flatten),
              Effect.orDie
            )
    })

    const query = TourQuery.of({
      get: (workspaceId, id) =>
        sql<{ document: unknown }>`SELECT document FROM tours WHERE workspace_id = ${workspaceId} AND id = ${id}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => decode(row.document))),
          Effect.orDie
        ),
      list: (workspaceId, query) =>
        sql<{ document: unknown }>`
          SELECT document FROM tours
          WHERE workspace_id = ${workspaceId}
            ${query.draftId === undefined ? sql`` : sql`AND draft_id = ${query.draftId}`}
            ${query.after === undefined ? sql`` : sql`AND (trigger_at, id) > (${query.after.triggerAt}, ${query.after.id})`}
          ORDER BY trigger_at, id
          LIMIT ${query.limit + 1}`.pipe(Effect.map(pageOfDocuments(decode, makePage, query.limit)), Effect.orDie)
    })

    return Context.make(TourRepository, repository).pipe(Context.add(TourQuery, query))
  })
)
