import { migration } from "../internal/migration.js"

// Statistics per webhook and clock hour of the events' recording (docs/decisions/0127): its
// deliveries by status, and the latencies of those that ended as a histogram
// (`DeliveryStats.latencyBucket`: bucket number → count). Kept by every statement that makes a
// delivery or changes its status, so a window reads at most 168 rows. Filled here from the
// deliveries there are; the covering index that statistics read before goes (one index less to
// keep on every write).
export default migration(function* (sql) {
  // As `DeliveryStats.latencyBucket`: below 64 ms exact, above 32 buckets per doubling. The
  // doubling is the highest set bit, read exactly from the bit string.
  yield* sql`
    CREATE FUNCTION waybill_latency_bucket(ms integer) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      SELECT CASE WHEN ms < 64 THEN greatest(ms, 0)
                  ELSE 64 + (e - 6) * 32 + (ms >> (e - 5)) - 32 END
      FROM (SELECT length(ltrim(greatest(ms, 0)::bit(32)::text, '0')) - 1 AS e) AS highest
    $$`
  // Two histograms added bucket by bucket; a bucket whose count comes to 0 is left out.
  yield* sql`
    CREATE FUNCTION waybill_latency_add(a jsonb, b jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT coalesce(jsonb_object_agg(bucket, total), '{}'::jsonb) FROM (
        SELECT bucket, sum(count::int) AS total
        FROM (SELECT * FROM jsonb_each_text(coalesce(a, '{}')) UNION ALL SELECT * FROM jsonb_each_text(coalesce(b, '{}'))) AS e(bucket, count)
        GROUP BY bucket HAVING sum(count::int) <> 0
      ) AS s
    $$`
  yield* sql`
    CREATE TABLE delivery_hours (
      webhook_id text NOT NULL,
      hour bigint NOT NULL,
      succeeded integer NOT NULL DEFAULT 0,
      failed integer NOT NULL DEFAULT 0,
      pending integer NOT NULL DEFAULT 0,
      held integer NOT NULL DEFAULT 0,
      latency jsonb NOT NULL DEFAULT '{}',
      PRIMARY KEY (webhook_id, hour)
    )`
  yield* sql`
    INSERT INTO delivery_hours (webhook_id, hour, succeeded, failed, pending, held, latency)
    SELECT webhook_id, hour, sum(succeeded)::int, sum(failed)::int, sum(pending)::int, sum(held)::int,
           coalesce(jsonb_object_agg(bucket::text, ended) FILTER (WHERE bucket IS NOT NULL), '{}')
    FROM (
      SELECT webhook_id, event_created_at / 3600 AS hour,
             CASE WHEN status IN ('succeeded', 'failed') THEN waybill_latency_bucket(latency_ms) END AS bucket,
             count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
             count(*) FILTER (WHERE status = 'failed') AS failed,
             count(*) FILTER (WHERE status = 'pending') AS pending,
             count(*) FILTER (WHERE status = 'held') AS held,
             count(*) FILTER (WHERE status IN ('succeeded', 'failed')) AS ended
      FROM deliveries WHERE status IN ('succeeded', 'failed', 'pending', 'held')
      GROUP BY 1, 2, 3
    ) AS per_bucket
    GROUP BY webhook_id, hour`
  yield* sql`DROP INDEX IF EXISTS deliveries_stats_idx`
})
