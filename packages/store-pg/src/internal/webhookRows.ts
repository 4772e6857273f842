/** A webhook's row: its document, and its revision and flow control in columns of their own. */
import { Webhook } from "@waybill/webhooks/Webhook"
import * as Schema from "effect/Schema"

/** A row of `webhooks` as `webhookColumns` selects it. */
export interface WebhookRow {
  readonly document: unknown
  readonly revision: number
  readonly status: string
  readonly disabled_reason: string | null
  readonly disabled_at: number | string | null
  readonly rate_limit_per_second: number | null
  readonly ordering: string
}

/** The columns a webhook is read from. */
export const webhookColumns =
  "document, revision, status, disabled_reason, disabled_at, rate_limit_per_second, ordering"

const decode = Schema.decodeUnknownSync(Webhook)

/** The webhook a row holds. */
export const webhookOf = (row: WebhookRow): Webhook =>
  decode({
    ...(row.document as object),
    revision: row.revision,
    status: row.status,
    ...(row.status === "disabled" && row.disabled_reason !== null && row.disabled_at !== null
      ? { disabledReason: row.disabled_reason, disabledAt: Number(row.disabled_at) }
      : {}),
    rateLimitPerSecond: row.rate_limit_per_second,
    ordering: row.ordering
  })
