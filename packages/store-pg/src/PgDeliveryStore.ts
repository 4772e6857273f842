/**
 * The `DeliveryStore` port on PostgreSQL: claims lock due deliveries with `FOR UPDATE SKIP LOCKED`
 * and lease them, so any number of dispatchers share the work (at-least-once after a crash).
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { Attempt, type DeliveryLog, type DeliveryStatus, Trigger } from "@waybill/webhooks/Delivery"
import * as DeliveryStats from "@waybill/webhooks/DeliveryStats"
import {
  type ClaimedDelivery,
  type ClaimRequest,
  DeliveryStore,
  type HeldDeliveries,
  type ResendResult
} from "@waybill/webhooks/DeliveryStore"
import * as FlowControl from "@waybill/webhooks/FlowControl"
import * as Page from "@waybill/webhooks/Page"
import { type Target, targetOf } from "@waybill/webhooks/Webhook"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { sqlLayer } from "./internal/adapter.js"
import { movedRows, rollHours } from "./internal/deliveryHours.js"
import { insertDeliveries } from "./internal/deliveryInsert.js"
import { type WebhookRow, webhookColumns, webhookOf } from "./internal/webhookRows.js"

// Attempts recorded before resend existed carry no trigger: they were all automatic.
const decodeAttempts = Schema.decodeUnknownSync(
  Schema.Array(
    Schema.Struct({
      ...Attempt.fields,
      trigger: Schema.optionalWith(Trigger, { default: () => "automatic" as const })
    })
  )
)

interface LogRow {
  readonly id: string
  readonly event_id: string
  readonly event_type: string
  readonly status: DeliveryStatus
  readonly ordering_key: string | null
  readonly attempts: unknown
}

const logOf = (row: LogRow): DeliveryLog => ({
  id: row.id,
  eventId: row.event_id,
  eventType: row.event_type,
  status: row.status,
  orderingKey: row.ordering_key,
  attempts: decodeAttempts(row.attempts)
})

// As the partial index `webhooks_flow_idx` (0011) holds them.
const flowControlled = (alias: string) =>
  `${alias}.status = 'enabled' AND (${alias}.rate_limit_per_second IS NOT NULL OR ${alias}.ordering <> 'none')`

interface FlowRow {
  readonly workspace_id: string
  readonly id: string
  readonly revision: number
  readonly rate_limit_per_second: number | null
  readonly ordering: string
}

interface ClaimedRow {
  readonly id: string
  readonly workspace_id: string
  readonly webhook_id: string
  readonly event_id: string
  readonly event_type: string
  readonly body: string
  readonly traceparent: string | null
  readonly attempt_count: number
  readonly abandoned_attempts: number
  readonly cycle_start: number
  readonly cycle_trigger: Trigger
  readonly due_at: number
  readonly seq: number
  readonly revision: number
  /** Whether any webhook takes the flow-controlled claim (plain claims only). */
  readonly flow?: boolean
  /** Flow-controlled claims only: claims given back for starting late since its last record. */
  readonly missed_slots?: number
  /** Set in code: a rate-limited webhook's slot for the attempt, and the latest it may start. */
  readonly not_before?: number
  readonly start_by?: number
}

/** The delivery store over the `SqlClient` in context. @since 0.1.0 */
export const layer: Layer.Layer<DeliveryStore, never, SqlClient.SqlClient> = sqlLayer(DeliveryStore, (sql) => {
  // A claim returns each webhook's current revision, so an entry older than that (an edit, maybe
  // by another process) is read again.
  const targets = new Map<string, Target>()
  const loadTargets = (webhookIds: ReadonlyArray<string>) =>
    Effect.map(
      sql<WebhookRow>`SELECT ${sql.literal(webhookColumns)} FROM webhooks WHERE id IN ${sql.in(webhookIds)}`,
      (rows) => {
        if (targets.size + rows.length > 10_000) targets.clear()
        for (const row of rows) {
          const webhook = webhookOf(row)
          targets.set(webhook.id, targetOf(webhook))
        }
      }
    )
  // Holding the webhook's `webhook_flow` row, so claimers in any process take turns: a rate-limited
  // webhook gets the slots its schedule has within the horizon; a FIFO one its earliest pending
  // delivery if due and unheld; a keyed one that of each key, and those without a key.
  const claimOne = (request: ClaimRequest, webhook: FlowRow, room: number) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const [flow] = yield* sql<{ slot: string; counts: string; next_at: number }>`
            INSERT INTO webhook_flow (webhook_id) VALUES (${webhook.id})
            ON CONFLICT (webhook_id) DO UPDATE SET slot = webhook_flow.slot
            RETURNING slot::text, array_to_string(counts, ',') AS counts, next_at`
        const nextAt = Number(flow?.next_at ?? 0)
        const rate = webhook.rate_limit_per_second
        const horizon = request.horizonMs ?? 0
        const wanted = Math.min(
          room,
          webhook.ordering === "fifo" ? 1 : room,
          rate === null ? room : FlowControl.schedule(nextAt, request.now, rate, room, horizon).notBefore.length
        )
        if (wanted <= 0) return []
        const picked =
          webhook.ordering === "fifo"
            ? sql`
                SELECT h.id FROM (
                  SELECT d.id, d.due_at, d.lease_until FROM deliveries d
                  WHERE d.webhook_id = ${webhook.id} AND d.workspace_id = ${webhook.workspace_id}
                    AND d.status = 'pending'
                  ORDER BY d.seq LIMIT 1
                ) h
                WHERE h.due_at <= ${request.now} AND (h.lease_until IS NULL OR h.lease_until <= ${request.now})`
            : webhook.ordering === "key"
              ? sql`
                SELECT c.id FROM (
                  SELECT h.id, h.seq FROM (
                    SELECT DISTINCT ON (d.ordering_key) d.id, d.seq, d.due_at, d.lease_until FROM deliveries d
                    WHERE d.webhook_id = ${webhook.id} AND d.workspace_id = ${webhook.workspace_id}
                      AND d.status = 'pending' AND d.ordering_key IS NOT NULL
                    ORDER BY d.ordering_key, d.seq
                  ) h
                  WHERE h.due_at <= ${request.now} AND (h.lease_until IS NULL OR h.lease_until <= ${request.now})
                  UNION ALL
                  SELECT d.id, d.seq FROM deliveries d
                  WHERE d.webhook_id = ${webhook.id} AND d.workspace_id = ${webhook.workspace_id}
                    AND d.status = 'pending' AND d.ordering_key IS NULL AND d.due_at <= ${request.now}
                    AND (d.lease_until IS NULL OR d.lease_until <= ${request.now})
                ) c
                ORDER BY c.seq LIMIT ${wanted}`
              : sql`
                SELECT d.id FROM deliveries d
                WHERE d.webhook_id = ${webhook.id} AND d.workspace_id = ${webhook.workspace_id}
                  AND d.status = 'pending' AND d.due_at <= ${request.now}
                  AND (d.lease_until IS NULL OR d.lease_until <= ${request.now})
                ORDER BY d.due_at, d.seq
                LIMIT ${wanted}
                FOR UPDATE OF d SKIP LOCKED`
        // A CTE, so the pick runs once (a subquery in FROM may be scanned again per row).
        const rows = yield* sql<ClaimedRow>`
            WITH p AS (${picked})
            UPDATE deliveries d SET lease_until = ${request.leaseUntil}, lease_token = ${request.leaseToken}
            FROM p, events e
            WHERE d.id = p.id AND e.id = d.event_id
              AND d.status = 'pending' AND (d.lease_until IS NULL OR d.lease_until <= ${request.now})
            RETURNING d.id, d.workspace_id, d.webhook_id, d.event_id, d.event_type, e.body, e.traceparent,
                      jsonb_array_length(d.attempts) AS attempt_count, d.abandoned_attempts, d.cycle_start, d.cycle_trigger, d.due_at,
                      d.seq, d.missed_slots, ${webhook.revision}::int AS revision`
        if (rate === null || rows.length === 0) return rows
        // Slots in the order the claim hands deliveries out; the window of 0011 too, for processes
        // of the previous release during a rolling deploy.
        const sorted = [...rows].sort((a, b) => a.due_at - b.due_at || a.seq - b.seq)
        const slots = FlowControl.place(
          nextAt,
          request.now,
          rate,
          horizon,
          sorted.map((row) => FlowControl.slotsFor(row.missed_slots ?? 0, rate))
        )
        const window = FlowControl.record(
          {
            slot: Number(flow?.slot ?? 0),
            counts: flow === undefined || flow.counts === "" ? [] : flow.counts.split(",").map(Number)
          },
          request.now,
          rows.length
        )
        yield* sql`
            UPDATE webhook_flow
            SET next_at = ${slots.nextAt}, slot = ${window.slot}, counts = ${`{${window.counts.join(",")}}`}::int[]
            WHERE webhook_id = ${webhook.id}`
        return sorted.map(
          (row, i): ClaimedRow => ({ ...row, not_before: slots.notBefore[i]!, start_by: slots.startBy[i]! })
        )
      })
    )
  const claimControlled = (request: ClaimRequest, limit: number) =>
    Effect.gen(function* () {
      const webhooks = yield* sql<FlowRow>`
          SELECT workspace_id, id, revision, rate_limit_per_second, ordering FROM webhooks w
          WHERE ${sql.literal(flowControlled("w"))}`
      const claimed: Array<ClaimedRow> = []
      for (const webhook of webhooks) {
        const room = Math.min(
          limit - claimed.length,
          request.roomByWebhook.get(webhook.id) ?? request.maxInFlightPerWebhook ?? request.maxPerWebhook
        )
        if (room > 0) claimed.push(...(yield* claimOne(request, webhook, room)))
      }
      return claimed
    })
  const isCurrent = (row: ClaimedRow) => (targets.get(row.webhook_id)?.revision ?? 0) >= row.revision
  return {
    insert: (deliveries) => (deliveries.length === 0 ? Effect.void : Effect.asVoid(insertDeliveries(sql, deliveries))),
    claimDue: (request) =>
      // One statement: per plain webhook at most its room of its earliest due deliveries, so one
      // busy receiver cannot fill a claim. Flow-controlled webhooks are claimed after.
      sql<ClaimedRow>`
          WITH room AS (
            SELECT key AS webhook_id, value::int AS room
            FROM json_each_text(${JSON.stringify(Object.fromEntries(request.roomByWebhook))}::json)
          ), picked AS (
            SELECT c.id, c.due_at, c.seq, w.revision FROM webhooks w
            LEFT JOIN room r ON r.webhook_id = w.id
            CROSS JOIN LATERAL (
              SELECT d.id, d.due_at, d.seq FROM deliveries d
              WHERE d.webhook_id = w.id AND d.workspace_id = w.workspace_id AND d.status = 'pending'
                AND d.due_at <= ${request.now} AND (d.lease_until IS NULL OR d.lease_until <= ${request.now})
              ORDER BY d.due_at, d.seq
              LIMIT COALESCE(r.room, ${request.maxPerWebhook})
              FOR UPDATE OF d SKIP LOCKED
            ) c
            WHERE COALESCE(r.room, ${request.maxPerWebhook}) > 0
              AND w.status = 'enabled' AND w.rate_limit_per_second IS NULL AND w.ordering = 'none'
            ORDER BY c.due_at, c.seq
            LIMIT ${request.limit}
          )
          UPDATE deliveries d SET lease_until = ${request.leaseUntil}, lease_token = ${request.leaseToken}
          FROM picked p, events e
          WHERE d.id = p.id AND e.id = d.event_id
          RETURNING d.id, d.workspace_id, d.webhook_id, d.event_id, d.event_type, e.body, e.traceparent,
                    jsonb_array_length(d.attempts) AS attempt_count, d.abandoned_attempts, d.cycle_start, d.cycle_trigger, p.due_at, p.seq, p.revision,
                    -- Once per statement (an uncorrelated subquery): whether any webhook takes
                    -- the flow-controlled claim, so a claim of plain work skips it otherwise.
                    (SELECT EXISTS (SELECT 1 FROM webhooks fw WHERE ${sql.literal(flowControlled("fw"))})) AS flow`.pipe(
        Effect.flatMap((plain) =>
          plain.length >= request.limit || (plain.length > 0 && !plain[0]!.flow)
            ? Effect.succeed(plain)
            : Effect.map(claimControlled(request, request.limit - plain.length), (controlled) => [
                ...plain,
                ...controlled
              ])
        ),
        Effect.flatMap((returned) => {
          const rows = [...returned].sort((a, b) => a.due_at - b.due_at || a.seq - b.seq)
          const stale = [...new Set(rows.filter((row) => !isCurrent(row)).map((row) => row.webhook_id))]
          return Effect.as(stale.length === 0 ? Effect.void : loadTargets(stale), rows)
        }),
        Effect.map((rows) =>
          rows.flatMap((row): Array<ClaimedDelivery> => {
            const target = targets.get(row.webhook_id)
            // A webhook deleted since the claim: its deliveries are being deleted with it.
            if (target === undefined) return []
            return [
              {
                id: row.id,
                workspaceId: row.workspace_id as WorkspaceId,
                webhookId: row.webhook_id,
                eventId: row.event_id,
                eventType: row.event_type,
                body: row.body,
                attempts: row.attempt_count,
                abandoned: row.abandoned_attempts,
                cycleStart: row.cycle_start,
                trigger: row.cycle_trigger,
                leaseToken: request.leaseToken,
                target,
                traceparent: row.traceparent,
                ...(row.not_before === undefined ? {} : { notBefore: row.not_before, startBy: row.start_by })
              }
            ]
          })
        ),
        Effect.orDie
      ),
    // By primary key, with the claim's token: a claim another dispatcher took since is left alone.
    renew: (claims, leaseUntil) =>
      claims.length === 0
        ? Effect.succeed([])
        : sql<{ id: string }>`
          UPDATE deliveries d SET lease_until = ${leaseUntil}
          FROM jsonb_to_recordset(${JSON.stringify(claims)}::jsonb) AS c("deliveryId" text, "leaseToken" text)
          WHERE d.id = c."deliveryId" AND d.status = 'pending' AND d.lease_token = c."leaseToken"
          RETURNING d.id`.pipe(
            Effect.map((rows) => rows.map((row) => row.id)),
            Effect.orDie
          ),
    releaseClaims: (claims) =>
      claims.length === 0
        ? Effect.succeed(0)
        : sql<{ released: number }>`
          WITH released AS (
            UPDATE deliveries d
            SET lease_until = NULL, lease_token = NULL,
                abandoned_attempts = d.abandoned_attempts + CASE WHEN c.abandoned THEN 1 ELSE 0 END,
                missed_slots = d.missed_slots + CASE WHEN c."missedSlot" THEN 1 ELSE 0 END
            FROM jsonb_to_recordset(${JSON.stringify(claims)}::jsonb)
              AS c("deliveryId" text, "leaseToken" text, abandoned boolean, "missedSlot" boolean)
            WHERE d.id = c."deliveryId" AND d.status = 'pending' AND d.lease_token = c."leaseToken"
            RETURNING 1
          )
          SELECT count(*)::int AS released FROM released`.pipe(
            Effect.map(([row]) => row?.released ?? 0),
            Effect.orDie
          ),
    complete: (completions) =>
      completions.length === 0
        ? Effect.succeed([])
        : sql<{ id: string }>`
          WITH done AS (
          UPDATE deliveries d
          SET attempts = d.attempts || jsonb_build_array(c.attempt),
              status = c.status,
              due_at = COALESCE(c.retry_at, d.due_at),
              latency_ms = c.latency_ms,
              lease_until = NULL, lease_token = NULL, missed_slots = 0
          FROM jsonb_to_recordset(${JSON.stringify(
            completions.map((completion) => ({
              id: completion.deliveryId,
              lease_token: completion.leaseToken,
              status: completion.status satisfies DeliveryStatus,
              retry_at: completion.retryAt,
              latency_ms: completion.latencyMs ?? null,
              attempt: completion.attempt
            }))
          )}::jsonb) AS c(id text, lease_token text, status text, retry_at bigint, latency_ms integer, attempt jsonb)
          WHERE d.id = c.id AND d.status = 'pending' AND d.lease_token = c.lease_token
          RETURNING d.id, d.webhook_id, d.event_created_at, d.status, d.latency_ms
          ), moved AS (
            SELECT webhook_id, event_created_at, status, latency_ms, 'pending' AS was, NULL::int AS was_latency_ms
            FROM done WHERE status <> 'pending'
          ), changed AS (${sql.literal(movedRows)}), rolled AS (${sql.literal(rollHours)})
          SELECT id FROM done`.pipe(
            Effect.map((rows) => rows.map((row) => row.id)),
            Effect.orDie
          ),
    list: (workspaceId, webhookId, query) =>
      sql<LogRow>`
          SELECT id, event_id, event_type, status, ordering_key, attempts FROM deliveries
          WHERE workspace_id = ${workspaceId} AND webhook_id = ${webhookId} AND status <> 'expired'
            ${query.after === undefined ? sql`` : sql`AND id < ${query.after}`}
          ORDER BY id DESC LIMIT ${query.limit + 1}`.pipe(
        Effect.map((rows) => Page.make("dlv", rows.map(logOf), query.limit, (log) => log.id)),
        Effect.orDie
      ),
    // A pending delivery (maybe in flight) is left alone, so a resend never sends one twice at
    // once; a held one waits for its webhook's enable, which sends it in event order.
    resend: (workspaceId, webhookId, deliveryId, now) =>
      sql<LogRow>`
          WITH before AS (
            SELECT id, status, latency_ms FROM deliveries
            WHERE id = ${deliveryId} AND workspace_id = ${workspaceId} AND webhook_id = ${webhookId}
              AND status NOT IN ('pending', 'held', 'expired')
            FOR UPDATE
          ), resent AS (
            UPDATE deliveries d
            SET status = 'pending', due_at = ${now}, cycle_start = jsonb_array_length(d.attempts),
                cycle_trigger = 'manual', lease_until = NULL, lease_token = NULL
            FROM before b
            WHERE d.id = b.id
            RETURNING d.id, d.event_id, d.event_type, d.status, d.ordering_key, d.attempts, d.webhook_id,
                      d.event_created_at, b.status AS ended, b.latency_ms
          ), moved AS (
            SELECT webhook_id, event_created_at, status, NULL::int AS latency_ms, ended AS was, latency_ms AS was_latency_ms
            FROM resent
          ), changed AS (${sql.literal(movedRows)}), rolled AS (${sql.literal(rollHours)})
          SELECT id, event_id, event_type, status, ordering_key, attempts FROM resent`.pipe(
        Effect.flatMap(
          ([resent]): Effect.Effect<ResendResult, unknown> =>
            resent !== undefined
              ? Effect.succeed({ _tag: "Resent", delivery: logOf(resent) })
              : Effect.map(
                  sql<{ status: string }>`
                      SELECT status FROM deliveries
                      WHERE id = ${deliveryId} AND workspace_id = ${workspaceId} AND webhook_id = ${webhookId}
                        AND status <> 'expired'`,
                  (rows): ResendResult =>
                    rows.length === 0 ? { _tag: "NotFound" } : { _tag: "Pending", held: rows[0]!.status === "held" }
                )
        ),
        Effect.orDie
      ),
    // Rows another replay or a resend made pending meanwhile fail the status check once their
    // lock is released, so concurrent replays never make a delivery due twice.
    replayStep: (request) => {
      // The first step starts at the window's start, so each range's index is entered there
      // rather than at the webhook's oldest delivery (a 30-day log walked to find nothing).
      const after = request.after ?? { eventCreatedAt: request.since, seq: -1 }
      return sql<{ resent: number; scanned: number; last_at: string | null; last_seq: string | null }>`
          WITH scanned AS (
            SELECT d.id, d.event_created_at, d.seq FROM deliveries d
            WHERE d.webhook_id = ${request.webhookId} AND d.workspace_id = ${request.workspaceId}
              AND d.event_created_at >= ${request.since} AND d.event_created_at < ${request.until}
              AND (d.event_created_at, d.seq) > (${after.eventCreatedAt}, ${after.seq})
              -- Pending deliveries are never replayed; the replay index holds only the others.
              AND d.status NOT IN ('pending', 'expired')
            ORDER BY d.event_created_at, d.seq
            LIMIT ${request.limit}
          ), locked AS (
            -- Locked, so the status each had before is the one this statement changes. By an array
            -- of ids, not a join: the join was estimated dear enough for the JIT (200 ms a step).
            SELECT d.id, d.status, d.latency_ms FROM deliveries d
            WHERE d.id = ANY (ARRAY(SELECT id FROM scanned)) AND d.status IN ${sql.in(request.statuses)}
            FOR UPDATE
          ), resent AS (
            UPDATE deliveries d
            SET status = 'pending', due_at = ${request.now}, cycle_start = jsonb_array_length(d.attempts),
                cycle_trigger = 'manual', lease_until = NULL, lease_token = NULL
            FROM locked l
            WHERE d.id = l.id
            RETURNING d.id, d.webhook_id, d.event_created_at, d.status, l.status AS was, l.latency_ms AS was_latency_ms
          ), moved AS (
            SELECT webhook_id, event_created_at, status, NULL::int AS latency_ms, was, was_latency_ms FROM resent
          ), changed AS (${sql.literal(movedRows)}), rolled AS (${sql.literal(rollHours)}), last AS (
            SELECT event_created_at, seq FROM scanned ORDER BY event_created_at DESC, seq DESC LIMIT 1
          )
          SELECT (SELECT count(*) FROM resent)::int AS resent, (SELECT count(*) FROM scanned)::int AS scanned,
                 (SELECT event_created_at FROM last)::text AS last_at, (SELECT seq FROM last)::text AS last_seq`.pipe(
        Effect.map(([row]) => ({
          resent: Number(row?.resent ?? 0),
          next:
            row === undefined || Number(row.scanned) < request.limit || row.last_at === null || row.last_seq === null
              ? undefined
              : { eventCreatedAt: Number(row.last_at), seq: Number(row.last_seq) }
        })),
        Effect.orDie
      )
    },
    // One statement for a page of webhooks; the ids go as one JSON parameter, so the statement's
    // text is the same for every page. Each webhook's oldest held delivery is the first entry of
    // the held deliveries' order index (webhook, id), ranges read oldest first until one holds it,
    // rather than every held row read for a minimum; how many it holds is the sum of its hours
    // (`delivery_hours`, at most one row per hour of the retention), not a count of the rows.
    held: (workspaceId, webhookIds) =>
      webhookIds.length === 0
        ? Effect.succeed(new Map<string, HeldDeliveries>())
        : sql<{ webhook_id: string; id: string; count: number }>`
          SELECT w.webhook_id, h.id,
                 (SELECT coalesce(sum(dh.held), 0) FROM delivery_hours dh WHERE dh.webhook_id = w.webhook_id)::int AS count
          FROM jsonb_array_elements_text(${JSON.stringify(webhookIds)}::jsonb) AS w(webhook_id)
          CROSS JOIN LATERAL (
            SELECT d.id FROM deliveries d
            WHERE d.webhook_id = w.webhook_id AND d.status = 'held' AND d.workspace_id = ${workspaceId}
            ORDER BY d.id LIMIT 1
          ) h`.pipe(
            Effect.map(
              (rows): ReadonlyMap<string, HeldDeliveries> =>
                new Map(rows.map((row) => [row.webhook_id, { count: Number(row.count), oldestId: row.id }]))
            ),
            Effect.orDie
          ),
    // At most 168 rows of `delivery_hours` (0021), kept by every statement that changes a status.
    stats: (workspaceId, webhookId, window) =>
      sql<{
        hour: string
        succeeded: number
        failed: number
        pending: number
        held: number
        latency: string
      }>`
          SELECT hour::text, succeeded, failed, pending, held, latency::text FROM delivery_hours
          WHERE webhook_id = ${webhookId} AND hour >= ${window.since / 3600}
            -- Only for the caller's workspace, whatever its caller checked before.
            AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = ${webhookId} AND w.workspace_id = ${workspaceId})`.pipe(
        Effect.map((hours) =>
          DeliveryStats.fromHours(
            window,
            // The histograms as text: `fromHours` scans them faster than `JSON.parse` reads them.
            hours.map((row) => ({ ...row, hour: Number(row.hour) }))
          )
        ),
        Effect.orDie
      ),
    // Other processes see the edit through the revision their next claim returns.
    retarget: (_workspaceId, target) =>
      Effect.sync(() => {
        if ((targets.get(target.webhookId)?.revision ?? 0) < target.revision) targets.set(target.webhookId, target)
      }),
    hold: (workspaceId, webhookId, now) =>
      sql`
          WITH moved AS (
            UPDATE deliveries SET status = 'held', lease_until = NULL, lease_token = NULL
            WHERE workspace_id = ${workspaceId} AND webhook_id = ${webhookId} AND status = 'pending'
              AND (lease_until IS NULL OR lease_until <= ${now})
            RETURNING webhook_id, event_created_at, status, NULL::int AS latency_ms, 'pending' AS was,
                      NULL::int AS was_latency_ms
          ), changed AS (${sql.literal(movedRows)})
          ${sql.literal(rollHours)}`.pipe(Effect.asVoid, Effect.orDie),
    // A held retry keeps its cycle, so it gets the retry it was waiting for.
    release: (workspaceId, webhookId, now) =>
      sql`
          WITH moved AS (
            UPDATE deliveries SET status = 'pending', due_at = ${now}, lease_until = NULL, lease_token = NULL
            WHERE workspace_id = ${workspaceId} AND webhook_id = ${webhookId} AND status = 'held'
            RETURNING webhook_id, event_created_at, status, NULL::int AS latency_ms, 'held' AS was,
                      NULL::int AS was_latency_ms
          ), changed AS (${sql.literal(movedRows)})
          ${sql.literal(rollHours)}`.pipe(Effect.asVoid, Effect.orDie),
    deleteForWebhook: (workspaceId, webhookId) =>
      Effect.zipRight(
        sql`DELETE FROM deliveries WHERE workspace_id = ${workspaceId} AND webhook_id = ${webhookId}`,
        Effect.zipRight(
          sql`DELETE FROM webhook_flow WHERE webhook_id = ${webhookId}`,
          sql`DELETE FROM delivery_hours WHERE webhook_id = ${webhookId}`
        )
      ).pipe(Effect.asVoid, Effect.orDie)
  }
})
