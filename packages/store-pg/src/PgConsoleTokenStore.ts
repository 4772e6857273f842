/** The `ConsoleTokenStore` port on PostgreSQL. @since 0.3.0 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { type ConsoleTokenScope, ConsoleTokenStore } from "@waybill/core/ConsoleTokens"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { insertInWorkspace, sqlLayer } from "./internal/adapter.js"

interface Row {
  readonly id: string
  readonly workspace_id: string
  readonly token_hash: string
  readonly scope: ConsoleTokenScope
  readonly label: string | null
  readonly created_at: number
  readonly expires_at: number
  readonly revoked_at: number | null
}

const toRecord = (row: Row) => ({
  id: row.id,
  workspaceId: row.workspace_id as WorkspaceId,
  scope: row.scope,
  label: row.label,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at
})

/** The token store over the `SqlClient` in context. @since 0.3.0 */
export const layer: Layer.Layer<ConsoleTokenStore, never, SqlClient.SqlClient> = sqlLayer(ConsoleTokenStore, (sql) => ({
  insert: (record) =>
    insertInWorkspace(
      sql,
      record,
      sql`
        INSERT INTO console_tokens (id, workspace_id, token_hash, scope, label, created_at, expires_at, revoked_at)
        VALUES (${record.id}, ${record.workspaceId}, ${record.hash}, ${record.scope}, ${record.label},
                ${record.createdAt}, ${record.expiresAt}, ${record.revokedAt})`
    ),
  find: (id) =>
    sql<Row>`SELECT * FROM console_tokens WHERE id = ${id}`.pipe(
      Effect.map((rows) =>
        Option.map(Option.fromNullable(rows[0]), (row) => ({ ...toRecord(row), hash: row.token_hash }))
      ),
      Effect.orDie
    ),
  listLive: (workspaceId, now) =>
    sql<Row>`
        SELECT * FROM console_tokens
        WHERE workspace_id = ${workspaceId} AND revoked_at IS NULL AND expires_at > ${now}
        ORDER BY id DESC`.pipe(
      Effect.map((rows) => rows.map(toRecord)),
      Effect.orDie
    ),
  revoke: (workspaceId, id, at) =>
    sql<{ id: string }>`
        UPDATE console_tokens SET revoked_at = ${at}
        WHERE id = ${id} AND workspace_id = ${workspaceId} AND revoked_at IS NULL AND expires_at > ${at}
        RETURNING id`.pipe(
      Effect.map((rows) => rows.length === 1),
      Effect.orDie
    )
}))
