/**
 * The `OutboxReader` port of `@waybill/webhooks` on PostgreSQL: the fan-out side of the events
 * outbox. The position and the lease are the one row of `fan_out`; events are read in the order
 * of their transaction's id (`xid8`), then `seq`, and only below the oldest transaction still
 * open (`pg_snapshot_xmin(pg_current_snapshot())`): every event there is committed or never will
 * be, so the position can pass it. A long-running writing transaction anywhere in the cluster
 * therefore delays fan-out (never loses an event) until it ends.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { OutboxReader } from "@waybill/webhooks/OutboxReader"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

// A position is "<xid>:<seq>".
const positionOf = (xid: string, seq: number | string) => `${xid}:${seq}`
const parse = (position: string) => {
  const separator = position.indexOf(":")
  return { xid: position.slice(0, separator), seq: position.slice(separator + 1) }
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<OutboxReader, never, SqlClient.SqlClient> = Layer.effect(
  OutboxReader,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return OutboxReader.of({
      acquire: (owner, now, leaseUntil) =>
        sql<{ xid: string; seq: string }>`
          UPDATE fan_out SET owner = ${owner}, lease_until = ${leaseUntil}
          WHERE owner IS NULL OR owner = ${owner} OR lease_until <= ${now}
          RETURNING xid::text, seq::text`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => positionOf(row.xid, row.seq))),
          Effect.orDie
        ),
      read: (position, limit) => {
        const after = parse(position)
        return sql<{
          id: string
          workspace_id: string
          type: string
          created_at: number
          body: string
          traceparent: string | null
          at_xid: string
          seq: number
        }>`
          SELECT id, workspace_id, type, created_at, body, traceparent, xid::text AS at_xid, seq FROM events
          WHERE (xid, seq) > (${after.xid}::xid8, ${after.seq}::bigint)
            AND xid < pg_snapshot_xmin(pg_current_snapshot())
          ORDER BY events.xid, events.seq LIMIT ${limit}`.pipe(
          Effect.map((rows) =>
            rows.map((row) => ({
              id: row.id,
              workspaceId: row.workspace_id as WorkspaceId,
              type: row.type,
              createdAt: row.created_at,
              body: row.body,
              traceparent: row.traceparent,
              position: positionOf(row.at_xid, row.seq)
            }))
          ),
          Effect.orDie
        )
      },
      advance: (owner, position, leaseUntil) => {
        const to = parse(position)
        return sql`
          UPDATE fan_out SET xid = ${to.xid}::xid8, seq = ${to.seq}::bigint, lease_until = ${leaseUntil},
                 owner = CASE WHEN ${leaseUntil}::bigint = 0 THEN NULL ELSE owner END
          WHERE owner = ${owner}
          RETURNING 1`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )
      }
    })
  })
)
