/**
 * The `IdempotencyStore` port on PostgreSQL: kept answers are rows of `idempotency_keys`. `insert`
 * is for creations whose adapter cannot write the answer in its own statement.
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { type IdempotencyRecord, IdempotencyStore } from "@waybill/core/Idempotency"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { sqlLayer } from "./internal/adapter.js"
import { insertKeys } from "./internal/idempotencyRows.js"

interface Row {
  readonly operation: string
  readonly fingerprint: string
  readonly status: number
  readonly body: string
  readonly created_at: string | number
  readonly expires_at: string | number
}

/** The store over the `SqlClient` in context. @since 0.1.0 */
export const layer: Layer.Layer<IdempotencyStore, never, SqlClient.SqlClient> = sqlLayer(IdempotencyStore, (sql) => {
  const recordOf = (workspaceId: WorkspaceId, key: string, row: Row): IdempotencyRecord => ({
    workspaceId,
    key,
    operation: row.operation,
    fingerprint: row.fingerprint,
    status: row.status,
    body: row.body,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at)
  })
  return {
    find: (workspaceId, key) =>
      sql<Row>`
          SELECT operation, fingerprint, status, body, created_at, expires_at FROM idempotency_keys
          WHERE workspace_id = ${workspaceId} AND key = ${key}`.pipe(
        Effect.map(([row]) => Option.map(Option.fromNullable(row), (found) => recordOf(workspaceId, key, found))),
        Effect.orDie
      ),
    insert: (record) =>
      sql<{ key: string }>`${insertKeys(sql, record.workspaceId, [record])}`.pipe(
        Effect.map((rows) => rows.length === 1),
        Effect.orDie
      ),
    // One short statement per step; rows another sweeper holds are skipped, not waited for.
    sweep: (now, limit) =>
      sql<{ key: string }>`
          DELETE FROM idempotency_keys k
          USING (
            SELECT workspace_id, key FROM idempotency_keys
            WHERE expires_at <= ${now}
            ORDER BY expires_at
            LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          ) due
          WHERE k.workspace_id = due.workspace_id AND k.key = due.key
          RETURNING k.key`.pipe(
        Effect.map((rows) => rows.length),
        Effect.orDie
      )
  }
})
