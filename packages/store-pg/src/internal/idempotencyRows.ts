import type * as SqlClient from "@effect/sql/SqlClient"
import type { IdempotencyRecord } from "@waybill/core/Idempotency"

/**
 * The insert of kept answers as a `WITH` clause returning the keys it inserted; a key kept already
 * inserts nothing. The records' keys must differ from one another.
 */
export const insertKeys = (
  sql: SqlClient.SqlClient,
  workspaceId: string,
  records: ReadonlyArray<IdempotencyRecord>
) => sql`
  INSERT INTO idempotency_keys (workspace_id, key, operation, fingerprint, status, body, created_at, expires_at)
  SELECT ${workspaceId}, key, operation, fingerprint, status, body, created_at, expires_at
  FROM json_to_recordset(${JSON.stringify(
    records.map((record) => ({
      key: record.key,
      operation: record.operation,
      fingerprint: record.fingerprint,
      status: record.status,
      body: record.body,
      created_at: record.createdAt,
      expires_at: record.expiresAt
    }))
  )}::json) AS k(key text, operation text, fingerprint text, status integer, body text, created_at bigint,
                 expires_at bigint)
  ON CONFLICT (workspace_id, key) DO NOTHING
  RETURNING key`

/** Of a batch's entries, those to write: every one without a record, and the first of a key. */
export const firstPerKey = <E extends { readonly record?: IdempotencyRecord | undefined }>(
  entries: ReadonlyArray<E>
): ReadonlyArray<E> => {
  const seen = new Set<string>()
  return entries.filter((entry) => {
    if (entry.record === undefined) return true
    if (seen.has(entry.record.key)) return false
    seen.add(entry.record.key)
    return true
  })
}
