/**
 * The `OutboxReader` port on PostgreSQL: events read in `(xid8, seq)` order below the oldest open
 * transaction, so the position never passes an uncommitted event (docs/webhooks.md).
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { type OutboxEvent, OutboxReader } from "@waybill/webhooks/OutboxReader"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { insertDeliveries } from "./internal/deliveryInsert.js"

// A position is "<xid>:<seq>".
const positionOf = (xid: string, seq: number | string) => `${xid}:${seq}`
const parse = (position: string) => {
  const separator = position.indexOf(":")
  return { xid: position.slice(0, separator), seq: position.slice(separator + 1) }
}

/**
 * What this process's fan-out has read up to, so that the listener need not wake it for a
 * notification of a transaction the last read saw already, nor for one that arrives while a read
 * is under way: that read answers for it (see `covers`).
 * @since 0.1.0
 */
export class ReadHorizon extends Context.Tag("@waybill/store-pg/PgOutboxReader/ReadHorizon")<
  ReadHorizon,
  {
    /**
     * Whether the last read saw every event of the transaction a notification names, or a read
     * under way will answer for it: if that read's snapshot does not cover the transaction, it
     * says events wait (`OutboxRead.waiting`), so fan-out reads again at once.
     */
    readonly covers: (notification: string) => boolean
  }
>() {}

const transactionId = /^[0-9]{1,20}$/

/** The reader, and the `ReadHorizon` its reads keep. @since 0.1.0 */
export const layer: Layer.Layer<OutboxReader | ReadHorizon, never, SqlClient.SqlClient> = Layer.effectContext(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    let horizon = 0n
    let reading = 0
    // The newest transaction notified while a read was under way; 0 when none.
    let notifiedDuringRead = 0n
    const covers = (notification: string) => {
      if (!transactionId.test(notification)) return false
      const xid = BigInt(notification)
      if (xid < horizon) return true
      if (reading === 0) return false
      if (xid > notifiedDuringRead) notifiedDuringRead = xid
      return true
    }
    const advancing = (owner: string, position: string, leaseUntil: number) => {
      const to = parse(position)
      return sql`
          UPDATE fan_out SET xid = ${to.xid}::xid8, seq = ${to.seq}::bigint, lease_until = ${leaseUntil},
                 owner = CASE WHEN ${leaseUntil}::bigint = 0 THEN NULL ELSE owner END
          WHERE owner = ${owner}
          RETURNING 1`
    }
    const reader = OutboxReader.of({
      acquire: (owner, now, leaseUntil) =>
        sql<{ xid: string; seq: string }>`
          UPDATE fan_out SET owner = ${owner}, lease_until = ${leaseUntil}
          WHERE owner IS NULL OR owner = ${owner} OR lease_until <= ${now}
          RETURNING xid::text, seq::text`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => positionOf(row.xid, row.seq))),
          Effect.orDie
        ),
      // Rows past the horizon come last, without bodies, only to say that events wait there.
      read: (position, limit) => {
        const after = parse(position)
        const query = sql<{
          horizon: string
          webhooks_version: string
          id: string | null
          workspace_id: string
          type: string
          created_at: number
          body: string | null
          traceparent: string | null
          ordering_key: string | null
          at_xid: string
          seq: number
        }>`
          WITH snapshot AS MATERIALIZED (
            SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin, (SELECT version FROM webhook_changes) AS version
          )
          SELECT snapshot.xmin::text AS horizon, snapshot.version::text AS webhooks_version, e.id, e.workspace_id, e.type, e.created_at,
                 CASE WHEN e.xid < snapshot.xmin THEN e.body END AS body, e.traceparent,
                 e.ordering_key, e.xid::text AS at_xid, e.seq
          FROM snapshot LEFT JOIN LATERAL (
            SELECT id, workspace_id, type, created_at, body, traceparent, ordering_key, xid, seq FROM events
            WHERE (xid, seq) > (${after.xid}::xid8, ${after.seq}::bigint)
            ORDER BY events.xid, events.seq LIMIT ${limit}
          ) AS e ON true`.pipe(
          Effect.map((rows) => {
            const read = BigInt(rows[0]?.horizon ?? "0")
            if (read > horizon) horizon = read
            const events: Array<OutboxEvent> = []
            // A transaction notified during this read and newer than its snapshot: read again.
            let waiting = notifiedDuringRead >= read
            notifiedDuringRead = 0n
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
                orderingKey: row.ordering_key,
                position: positionOf(row.at_xid, row.seq)
              })
            }
            return { events, waiting, webhooksVersion: rows[0]?.webhooks_version }
          }),
          Effect.orDie
        )
        return Effect.suspend(() => {
          reading++
          return Effect.ensuring(
            query,
            Effect.sync(() => {
              reading--
            })
          )
        })
      },
      advance: (owner, position, leaseUntil) =>
        advancing(owner, position, leaseUntil).pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      // One statement: the deliveries go in only if the position moved (decision 0129).
      advanceInserting: (owner, position, leaseUntil, deliveries) =>
        insertDeliveries(sql, deliveries, advancing(owner, position, leaseUntil))
    })
    return Context.make(OutboxReader, reader).pipe(Context.add(ReadHorizon, ReadHorizon.of({ covers })))
  })
)
