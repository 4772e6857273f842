/**
 * The read behind the storage gauges, on every scrape: it must cost what is open, not what was
 * ever stored, so it reads partial indexes (0004, 0014), starts at the fan-out position, and finds the oldest
 * event kept as the first id of the first range (ids sort by time).
 */
import type * as SqlClient from "@effect/sql/SqlClient"

/** What the read answers: the open deliveries and the first event not yet fanned out. */
export interface GaugesRow {
  readonly pending: number
  readonly oldest_id: string | null
  readonly oldest_at: number | null
  readonly first_id: string | null
}

/** The statement, for `PgMetrics.refresh` and for the test that holds its plan to the indexes. */
export const read = (sql: SqlClient.SqlClient) =>
  sql<GaugesRow>`
    SELECT ((SELECT count(*) FROM deliveries WHERE status = 'pending')
          + (SELECT count(*) FROM deliveries WHERE status = 'held'))::int AS pending,
           oldest.id AS oldest_id, oldest.created_at AS oldest_at,
           (SELECT id FROM events ORDER BY id LIMIT 1) AS first_id
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (
      SELECT e.id, e.created_at FROM fan_out f
      CROSS JOIN LATERAL (
        SELECT id, created_at FROM events
        WHERE (xid, seq) > (f.xid, f.seq)
        ORDER BY xid, seq LIMIT 1
      ) AS e
    ) AS oldest ON true`
