/**
 * The `OutboxReader` port of `@waybill/webhooks` on PostgreSQL: the fan-out side of the events
 * outbox. Pending events are claimed in commit order with `FOR UPDATE SKIP LOCKED` and marked
 * fanned out in the same statement, so several dispatchers fan out disjoint batches.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { OutboxReader } from "@waybill/webhooks/OutboxReader"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<OutboxReader, never, SqlClient.SqlClient> = Layer.effect(
  OutboxReader,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return OutboxReader.of({
      claimPending: (limit, at) =>
        sql<{ id: string; workspace_id: string; type: string; created_at: number; body: string; seq: number }>`
          UPDATE events SET fanned_out_at = ${at}
          WHERE seq IN (
            SELECT seq FROM events WHERE fanned_out_at IS NULL ORDER BY seq LIMIT ${limit} FOR UPDATE SKIP LOCKED
          )
          RETURNING id, workspace_id, type, created_at, body, seq`.pipe(
          Effect.map((rows) =>
            [...rows]
              .sort((a, b) => a.seq - b.seq)
              .map((row) => ({
                id: row.id,
                workspaceId: row.workspace_id as WorkspaceId,
                type: row.type,
                createdAt: row.created_at,
                body: row.body
              }))
          ),
          Effect.orDie
        )
    })
  })
)
