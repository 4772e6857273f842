/** The `ApiKeyStore` port on PostgreSQL. @since 0.1.0 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { ApiKeyStore } from "@waybill/core/ApiKeys"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { insertInWorkspace, sqlLayer } from "./internal/adapter.js"

interface Row {
  readonly id: string
  readonly workspace_id: string
  readonly key_hash: string
  readonly created_at: number
  readonly revoked_at: number | null
}

const toRecord = (row: Row) => ({
  id: row.id,
  workspaceId: row.workspace_id as WorkspaceId,
  createdAt: row.created_at,
  revokedAt: row.revoked_at
})

/** The key store over the `SqlClient` in context. @since 0.1.0 */
export const layer: Layer.Layer<ApiKeyStore, never, SqlClient.SqlClient> = sqlLayer(ApiKeyStore, (sql) => ({
  insert: (record) =>
    insertInWorkspace(
      sql,
      record,
      sql`
        INSERT INTO api_keys (id, workspace_id, key_hash, created_at, revoked_at)
        VALUES (${record.id}, ${record.workspaceId}, ${record.hash}, ${record.createdAt}, ${record.revokedAt})`
    ),
  find: (id) =>
    sql<Row>`SELECT * FROM api_keys WHERE id = ${id}`.pipe(
      Effect.map((rows) =>
        Option.map(Option.fromNullable(rows[0]), (row) => ({ ...toRecord(row), hash: row.key_hash }))
      ),
      Effect.orDie
    ),
  list: sql<Row>`SELECT * FROM api_keys ORDER BY id`.pipe(
    Effect.map((rows) => rows.map(toRecord)),
    Effect.orDie
  ),
  revoke: (id, at) =>
    sql<{ id: string }>`
          UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL RETURNING id`.pipe(
      Effect.map((rows) => rows.length === 1),
      Effect.orDie
    )
}))
