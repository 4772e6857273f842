/**
 * A webhook's status (contract §8) as the list and its page show it: a badge (enabled, or
 * disabled with its reason), how many of its deliveries are held and from when the retention
 * ends them as expired (`oldestHeldExpiresAt`), and the Disable / Enable
 * button (`POST /webhooks/{id}/disable|enable`). Disabling loses nothing: the deliveries of
 * events that happen meanwhile are held and sent, in event order, on Enable.
 */
import type { WebhookResponse } from "@waybill/webhooks/Webhook"
import { useState } from "preact/hooks"
import { type Api, ApiFailure, call } from "./api.js"

const reasons = { manual: "By an operator", failing: "Automatically, as its deliveries kept failing," } as const

/** "Enabled", or "Disabled" with why. */
export const StatusBadge = ({ webhook }: { readonly webhook: WebhookResponse }) =>
  webhook.status === "enabled" ? (
    <span class="webhook-status webhook-enabled">Enabled</span>
  ) : (
    <span class="webhook-status webhook-disabled">
      Disabled{webhook.disabledReason === undefined ? "" : ` (${webhook.disabledReason})`}
    </span>
  )

/** What the status means, beside its badge, with the time it was disabled (UTC, as the console shows times). */
export const statusSentence = (webhook: WebhookResponse, time: (seconds: number) => string) =>
  webhook.status === "enabled"
    ? "Deliveries are sent as events happen."
    : `${webhook.disabledReason === undefined ? "" : `${reasons[webhook.disabledReason]} `}${
        webhook.disabledAt === undefined ? "" : `since ${time(webhook.disabledAt)}`
      }: deliveries are held, and Enable sends them in event order.`

/**
 * "12 deliveries held": how many of a disabled webhook's deliveries are held, all of them (the
 * answer's `heldDeliveries`, absent when none); `null` when the webhook is enabled.
 */
export const heldText = (webhook: WebhookResponse): string | null => {
  if (webhook.status === "enabled") return null
  const held = webhook.heldDeliveries ?? 0
  return `${held} ${held === 1 ? "delivery" : "deliveries"} held`
}

/**
 * From when held deliveries expire (the retention ends them, undelivered), as the API answers it
 * while the webhook holds some: "Held deliveries expire from 2027-01-22 10:00 UTC (retention);
 * enable the webhook before then to send them."; `null` when nothing held expires.
 */
export const heldExpiryText = (webhook: WebhookResponse, time: (seconds: number) => string): string | null =>
  webhook.oldestHeldExpiresAt === undefined
    ? null
    : `Held deliveries expire from ${time(webhook.oldestHeldExpiresAt)} (retention); enable the webhook before then to send them.`

/**
 * Disable or Enable: the webhook as the API answered, and a sentence for the page's live region,
 * are handed to `onChanged`.
 */
export const ToggleStatus = (props: {
  readonly api: Api
  readonly webhook: WebhookResponse
  readonly onChanged: (webhook: WebhookResponse, notice: string) => void
  /** Drawn as a link among links (the list's card), else as a button. */
  readonly link?: boolean
}) => {
  const { api, webhook } = props
  const [busy, setBusy] = useState(false)
  const disabled = webhook.status === "disabled"
  const toggle = async () => {
    setBusy(true)
    try {
      const changed = await call(
        disabled
          ? api.webhooks.enable({ path: { id: webhook.id } })
          : api.webhooks.disable({ path: { id: webhook.id } })
      )
      props.onChanged(
        changed,
        disabled
          ? `${webhook.url} is enabled: its held deliveries are being sent in event order.`
          : `${webhook.url} is disabled: its deliveries are held until it is enabled.`
      )
    } catch (error) {
      props.onChanged(webhook, error instanceof ApiFailure ? error.message : String(error))
    } finally {
      setBusy(false)
    }
  }
  return (
    <button
      type="button"
      class={`${props.link === true ? "link " : ""}${disabled ? "enable" : "disable"}`}
      disabled={busy}
      onClick={toggle}
    >
      {disabled ? "Enable" : "Disable"}
    </button>
  )
}
