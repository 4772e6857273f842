/**
 * The `DeliveryStore` port of `@waybill/webhooks` on PostgreSQL. Claims lock due deliveries with
 * `FOR UPDATE SKIP LOCKED` and lease them, so any number of dispatchers (in one process or many)
 * share the work without sending a delivery twice, except after a crash (a lease that expires
 * is taken over: at-least-once, with the same delivery id).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { Attempt, type DeliveryLog, type DeliveryStatus, Trigger } from "@waybill/webhooks/Delivery"
import { type ClaimedDelivery, DeliveryStore, type ResendResult } from "@waybill/webhooks/DeliveryStore"
import * as Page from "@waybill/webhooks/Page"
import { type Target, targetOf, Webhook } from "@waybill/webhooks/Webhook"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const decodeWebhook = Schema.decodeUnknownSync(Webhook)
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
  readonly attempts: unknown
}

const logOf = (row: LogRow): DeliveryLog => ({
  id: row.id,
  eventId: row.event_id,
  eventType: row.event_type,
  status: row.status,
  attempts: decodeAttempts(row.attempts)
})

interface ClaimedRow {
  readonly id: string
  readonly workspace_id: string
  readonly webhook_id: string
  readonly event_id: string
  readonly event_type: string
  readonly body: string
  readonly traceparent: string | null
  readonly attempt_count: number
  readonly cycle_start: number
  readonly cycle_trigger: Trigger
  readonly due_at: number
  readonly seq: number
  readonly revision: number
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<DeliveryStore, never, SqlClient.SqlClient> = Layer.effect(
  DeliveryStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Delivery targets by webhook id. A claim returns each webhook's current revision, so an
    // entry older than that (an edit, maybe by another process) is read again; the map is
    // cleared when it grows past a bound.
    const targets = new Map<string, Target>()
    const loadTargets = (webhookIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<{
          document: unknown
          revision: number
        }>`SELECT document, revision FROM webhooks WHERE id IN ${sql.in(webhookIds)}`,
        (rows) => {
          if (targets.size + rows.length > 10_000) targets.clear()
          for (const row of rows) {
            const webhook = decodeWebhook({ ...(row.document as object), revision: row.revision })
            targets.set(webhook.id, targetOf(webhook))
          }
        }
      )
    const isCurrent = (row: ClaimedRow) => (targets.get(row.webhook_id)?.revision ?? 0) >= row.revision
    return DeliveryStore.of({
      insert: (deliveries) =>
        deliveries.length === 0
          ? Effect.void
          : // One parameter for the whole batch; a second row for an id (the same event fanned
            // out again after a crash) is ignored.
            sql`
          INSERT INTO deliveries (id, workspace_id, webhook_id, event_id, event_type, event_created_at, created_at,
                                  status, due_at, attempts, lease_until, lease_token)
          SELECT id, workspace_id, webhook_id, event_id, event_type, event_created_at, created_at, status, due_at,
                 COALESCE(attempts, '[]'), lease_until, lease_token
          FROM jsonb_to_recordset(${JSON.stringify(
            deliveries.map((delivery, n) => ({
              n,
              id: delivery.id,
              workspace_id: delivery.workspaceId,
              webhook_id: delivery.webhookId,
              event_id: delivery.eventId,
              event_type: delivery.eventType,
              event_created_at: delivery.eventCreatedAt,
              created_at: delivery.createdAt,
              status: delivery.outcome?.status ?? "pending",
              due_at: delivery.dueAt,
              attempts: delivery.outcome === undefined ? null : [delivery.outcome.attempt],
              lease_until: delivery.lease?.until ?? null,
              lease_token: delivery.lease?.token ?? null
            }))
          )}::jsonb) AS d(n int, id text, workspace_id text, webhook_id text, event_id text,
            event_type text, event_created_at bigint, created_at bigint, status text, due_at bigint, attempts jsonb, lease_until bigint,
            lease_token text)
          ORDER BY n
          ON CONFLICT (id) DO NOTHING`.pipe(Effect.asVoid, Effect.orDie),
      claimDue: (request) =>
        // One statement, so no transaction to open: per webhook at most its room of its earliest
        // due deliveries (fairness: one busy receiver cannot fill a claim), locked or skipped if
        // another dispatcher holds them, then leased.
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
            ORDER BY c.due_at, c.seq
            LIMIT ${request.limit}
          )
          UPDATE deliveries d SET lease_until = ${request.leaseUntil}, lease_token = ${request.leaseToken}
          FROM picked p, events e
          WHERE d.id = p.id AND e.id = d.event_id
          RETURNING d.id, d.workspace_id, d.webhook_id, d.event_id, d.event_type, e.body, e.traceparent,
                    jsonb_array_length(d.attempts) AS attempt_count, d.cycle_start, d.cycle_trigger, p.due_at, p.seq, p.revision`.pipe(
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
                  cycleStart: row.cycle_start,
                  trigger: row.cycle_trigger,
                  leaseToken: request.leaseToken,
                  target,
                  traceparent: row.traceparent
                }
              ]
            })
          ),
          Effect.orDie
        ),
      complete: (completions) =>
        completions.length === 0
          ? Effect.succeed([])
          : sql<{ id: string }>`
          UPDATE deliveries d
          SET attempts = d.attempts || jsonb_build_array(c.attempt),
              status = c.status,
              due_at = COALESCE(c.retry_at, d.due_at),
              lease_until = NULL, lease_token = NULL
          FROM jsonb_to_recordset(${JSON.stringify(
            completions.map((completion) => ({
              id: completion.deliveryId,
              lease_token: completion.leaseToken,
              status: completion.status satisfies DeliveryStatus,
              retry_at: completion.retryAt,
              attempt: completion.attempt
            }))
          )}::jsonb) AS c(id text, lease_token text, status text, retry_at bigint, attempt jsonb)
          WHERE d.id = c.id AND d.status = 'pending' AND d.lease_token = c.lease_token
          RETURNING d.id`.pipe(
              Effect.map((rows) => rows.map((row) => row.id)),
              Effect.orDie
            ),
      list: (workspaceId, webhookId, query) =>
        sql<LogRow>`
          SELECT id, event_id, event_type, status, attempts FROM deliveries
          WHERE workspace_id = ${workspaceId} AND webhook_id = ${webhookId}
            ${query.after === undefined ? sql`` : sql`AND id < ${query.after}`}
          ORDER BY id DESC LIMIT ${query.limit + 1}`.pipe(
          Effect.map((rows) => Page.make("dlv", rows.map(logOf), query.limit, (log) => log.id)),
          Effect.orDie
        ),
      // One statement: a delivery that is pending already (maybe leased and in flight) is left
      // alone, so a resend never sends a delivery twice at once.
      resend: (workspaceId, webhookId, deliveryId, now) =>
        sql<LogRow>`
          UPDATE deliveries d
          SET status = 'pending', due_at = ${now}, cycle_start = jsonb_array_length(d.attempts),
              cycle_trigger = 'manual', lease_until = NULL, lease_token = NULL
          WHERE d.id = ${deliveryId} AND d.workspace_id = ${workspaceId} AND d.webhook_id = ${webhookId}
            AND d.status <> 'pending'
          RETURNING d.id, d.event_id, d.event_type, d.status, d.attempts`.pipe(
          Effect.flatMap(
            ([resent]): Effect.Effect<ResendResult, unknown> =>
              resent !== undefined
                ? Effect.succeed({ _tag: "Resent", delivery: logOf(resent) })
                : Effect.map(
                    sql<{ status: string }>`
                      SELECT status FROM deliveries
                      WHERE id = ${deliveryId} AND workspace_id = ${workspaceId} AND webhook_id = ${webhookId}`,
                    (rows): ResendResult => (rows.length === 0 ? { _tag: "NotFound" } : { _tag: "Pending" })
                  )
          ),
          Effect.orDie
        ),
      // One statement per step, over at most `limit` rows of one webhook (the replay index):
      // rows that another replay or a resend made pending meanwhile fail the status check once
      // their lock is released, so concurrent replays never make a delivery due twice.
      replayStep: (request) => {
        const after = request.after ?? { eventCreatedAt: -1, seq: -1 }
        return sql<{ resent: number; scanned: number; last_at: string | null; last_seq: string | null }>`
          WITH scanned AS (
            SELECT d.id, d.event_created_at, d.seq FROM deliveries d
            WHERE d.webhook_id = ${request.webhookId} AND d.workspace_id = ${request.workspaceId}
              AND d.event_created_at >= ${request.since} AND d.event_created_at < ${request.until}
              AND (d.event_created_at, d.seq) > (${after.eventCreatedAt}, ${after.seq})
              -- Pending deliveries are never replayed; the replay index holds only the others.
              AND d.status <> 'pending'
            ORDER BY d.event_created_at, d.seq
            LIMIT ${request.limit}
          ), resent AS (
            UPDATE deliveries d
            SET status = 'pending', due_at = ${request.now}, cycle_start = jsonb_array_length(d.attempts),
                cycle_trigger = 'manual', lease_until = NULL, lease_token = NULL
            FROM scanned s
            WHERE d.id = s.id AND d.status IN ${sql.in(request.statuses)}
            RETURNING d.id
          ), last AS (
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
      // Other processes see the edit through the revision their next claim returns.
      retarget: (_workspaceId, target) =>
        Effect.sync(() => {
          if ((targets.get(target.webhookId)?.revision ?? 0) < target.revision) targets.set(target.webhookId, target)
        }),
      deleteForWebhook: (workspaceId, webhookId) =>
        sql`DELETE FROM deliveries WHERE workspace_id = ${workspaceId} AND webhook_id = ${webhookId}`.pipe(
          Effect.asVoid,
          Effect.orDie
        )
    })
  })
)
