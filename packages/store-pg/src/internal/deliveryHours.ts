/** Statistics per webhook and hour (`delivery_hours`, migration 0021), kept by the statements that change deliveries. */

/**
 * Adds the rows of the CTE `changed` (webhook_id, event_created_at, status, latency_ms, sign) to
 * `delivery_hours`: a delivery that enters a status counts `1` there, one that leaves it `-1`
 * (a change of status is two rows). Ended ones add their latency to the hour's histogram. Rows are
 * upserted in key order, so concurrent statements lock them in one order.
 */
export const rollHours = `
  INSERT INTO delivery_hours AS h (webhook_id, hour, succeeded, failed, pending, held, latency)
  SELECT webhook_id, hour, sum(succeeded)::int, sum(failed)::int, sum(pending)::int, sum(held)::int,
         coalesce(jsonb_object_agg(bucket::text, ended) FILTER (WHERE bucket IS NOT NULL AND ended <> 0), '{}')
  FROM (
    SELECT webhook_id, event_created_at / 3600 AS hour,
           CASE WHEN status IN ('succeeded', 'failed') THEN waybill_latency_bucket(latency_ms) END AS bucket,
           coalesce(sum(sign) FILTER (WHERE status = 'succeeded'), 0) AS succeeded,
           coalesce(sum(sign) FILTER (WHERE status = 'failed'), 0) AS failed,
           coalesce(sum(sign) FILTER (WHERE status = 'pending'), 0) AS pending,
           coalesce(sum(sign) FILTER (WHERE status = 'held'), 0) AS held,
           coalesce(sum(sign) FILTER (WHERE status IN ('succeeded', 'failed')), 0) AS ended
    FROM changed WHERE status IN ('succeeded', 'failed', 'pending', 'held')
    GROUP BY 1, 2, 3
  ) AS per_bucket
  GROUP BY webhook_id, hour
  ORDER BY webhook_id, hour
  ON CONFLICT (webhook_id, hour) DO UPDATE
  SET succeeded = h.succeeded + excluded.succeeded, failed = h.failed + excluded.failed,
      pending = h.pending + excluded.pending, held = h.held + excluded.held,
      latency = waybill_latency_add(h.latency, excluded.latency)`

/**
 * `changed` for statements that move deliveries from one status to another: the CTE `moved`
 * (webhook_id, event_created_at, status, latency_ms, was, was_latency_ms) gives both rows of each.
 */
export const movedRows = `
  SELECT webhook_id, event_created_at, status, latency_ms, 1 AS sign FROM moved
  UNION ALL
  SELECT webhook_id, event_created_at, was, was_latency_ms, -1 FROM moved`
