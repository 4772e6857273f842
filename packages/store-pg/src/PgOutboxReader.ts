/**
 * The `OutboxReader` port of `@waybill/webhooks` on PostgreSQL: the fan-out side of the events
 * outbox. The position and the lease are the one row of `fan_out`; events are read in the order
 * of their transaction's id (`xid8`), then `seq`, and only below the oldest transaction still
 * open (`pg_snapshot_xmin(pg_current_snapshot())`): every event there is committed or never will
 * be, so the position can pass it. A long-running writing transaction anywhere in the cluster
 * therefore delays fan-out (never loses an event) until it ends; a read says when events wait
 * behind one (`OutboxRead.waiting`).
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { type OutboxEvent, OutboxReader } from "@waybill/webhooks/OutboxReader"
import * as Context from "effect/Context"
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
 * What this process's fan-out has read up to: the oldest transaction still open when its last
 * read began. A notification names its transaction (`pg_current_xact_id()`); one below that
 * horizon asks for nothing the read did not see, so the listener need not wake fan-out for it
 * (without this, every commit of an event in this process woke fan-out twice: once in-process,
 * once by its notification, whose read found nothing).
 * @since 0.1.0
 */
export class ReadHorizon extends Context.Tag("@waybill/store-pg/PgOutboxReader/ReadHorizon")<
  ReadHorizon,
  {
    /** Whether the last read saw every event of the transaction a notification names. */
    readonly covers: (notification: string) => boolean
  }
>() {}

const transactionId = /^[0-9]{1,20}$/

/**
 * The reader, and the `ReadHorizon` its reads keep.
 * @since 0.1.0
 */
export const layer: Layer.Layer<OutboxReader | ReadHorizon, never, SqlClient.SqlClient> = Layer.effectContext(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    let horizon = 0n
    const covers = (notification: string) => transactionId.test(notification) && BigInt(notification) < horizon
    const reader = OutboxReader.of({
      acquire: (owner, now, leaseUntil) =>
        sql<{ xid: string; seq: string }>`
          UPDATE fan_out SET owner = ${owner}, lease_until = ${leaseUntil}
          WHERE owner IS NULL OR owner = ${owner} OR lease_until <= ${now}
          RETURNING xid::text, seq::text`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => positionOf(row.xid, row.seq))),
          Effect.orDie
        ),
      // Rows past the horizon come last in this order: they are returned (without their
      // bodies) only to say that events wait there.
      read: (position, limit) => {
        const after = parse(position)
        return sql<{
          horizon: string
          id: string | null
          workspace_id: string
          type: string
          created_at: number
          body: string | null
          traceparent: string | null
          at_xid: string
          seq: number
        }>`
          WITH snapshot AS MATERIALIZED (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
          SELECT snapshot.xmin::text AS horizon, e.id, e.workspace_id, e.type, e.created_at,
                 CASE WHEN e.xid < snapshot.xmin THEN e.body END AS body, e.traceparent,
                 e.xid::text AS at_xid, e.seq
          FROM snapshot LEFT JOIN LATERAL (
            SELECT id, workspace_id, type, created_at, body, traceparent, xid, seq FROM events
            WHERE (xid, seq) > (${after.xid}::xid8, ${after.seq}::bigint)
            ORDER BY events.xid, events.seq LIMIT ${limit}
          ) AS e ON true`.pipe(
          Effect.map((rows) => {
            const read = BigInt(rows[0]?.horizon ?? "0")
            if (read > horizon) horizon = read
            const events: Array<OutboxEvent> = []
            let waiting = false
            for (const row of rows) {
              if (row.id === null) break
              if (row.body === null) {
                waiting = true
                break
              }
              events.push({
                id: row.id,
                workspaceId: row.workspace_id as WorkspaceId,
                type: row.type,
                createdAt: row.created_at,
                body: row.body,
                traceparent: row.traceparent,
                position: positionOf(row.at_xid, row.seq)
              })
            }
            return { events, waiting }
          }),
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
    return Context.make(OutboxReader, reader).pipe(Context.add(ReadHorizon, ReadHorizon.of({ covers })))
  })
)
