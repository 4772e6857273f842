/**
 * One webhook: its settings (its status with the deliveries it holds and from when they expire,
 * rate limit and ordering, the end of a secret rotation's overlap while one runs), Disable / Enable, the
 * "Rotate secret" action, a chart of its last 24 hours (`DeliveryChart`), its delivery log (every attempt with status code, error class,
 * duration and trigger, a Resend button per delivery that has ended, and a replay of failed
 * deliveries since a time) and its failure alerts.
 */
import type { DeliveryLog } from "@waybill/webhooks/Delivery"
import type { DeliveryStats } from "@waybill/webhooks/DeliveryStats"
import type { FailureAlert } from "@waybill/webhooks/FailureAlerts"
import type { WebhookResponse } from "@waybill/webhooks/Webhook"
import { useEffect, useState } from "preact/hooks"
import { useCanManage } from "./access.js"
import { type Api, ApiFailure, call } from "./api.js"
import { DeliveryChart } from "./DeliveryChart.js"
import { controlId } from "./filterModel.js"
import { FieldIssues, type Issues, invalidity } from "./Issues.js"
import { Notice } from "./Notice.js"
import { RotateSecret, rotationNotice } from "./RotateSecret.js"
import { Section } from "./Section.js"
import { deliveryText } from "./WebhookList.js"
import { heldExpiryText, heldText, StatusBadge, statusSentence, ToggleStatus } from "./WebhookStatus.js"

// A `datetime-local` value (the browser's time zone) for epoch seconds, and back.
const localInput = (seconds: number) => {
  const date = new Date(seconds * 1000)
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}
const fromLocalInput = (value: string): number | undefined => {
  const millis = new Date(value).getTime()
  return Number.isFinite(millis) ? Math.floor(millis / 1000) : undefined
}

const time = (seconds: number) => `${new Date(seconds * 1000).toISOString().slice(0, 19).replace("T", " ")} UTC`

interface Pages {
  readonly deliveries: ReadonlyArray<DeliveryLog>
  readonly deliveriesCursor: string | null
  readonly alerts: ReadonlyArray<FailureAlert>
  readonly stats: DeliveryStats
}

export const WebhookDetail = (props: {
  readonly api: Api
  readonly webhook: WebhookResponse
  /** The webhook as the API answered a change made here (a rotation, Disable or Enable). */
  readonly onChanged: (webhook: WebhookResponse) => void
}) => {
  const { api, webhook } = props
  const canManage = useCanManage()
  const [rotating, setRotating] = useState(false)
  const [pages, setPages] = useState<Pages | null>(null)
  const [failure, setFailure] = useState<string | null>(null)
  // What the last resend or replay did, for the live region.
  const [notice, setNotice] = useState<string | null>(null)
  const [since, setSince] = useState(() => localInput(Math.floor(Date.now() / 1000) - 86_400))
  const [replayIssues, setReplayIssues] = useState<Issues>([])
  const [busy, setBusy] = useState(false)
  const held = heldText(webhook)

  const refresh = async () => {
    try {
      const [deliveries, alerts, stats] = await Promise.all([
        call(api.webhooks.deliveries({ path: { id: webhook.id }, urlParams: { limit: 50 } })),
        call(api.webhooks.alerts({ urlParams: { webhookId: webhook.id, limit: 50 } })),
        call(api.webhooks.stats({ path: { id: webhook.id }, urlParams: {} }))
      ])
      setPages({ deliveries: deliveries.data, deliveriesCursor: deliveries.nextCursor, alerts: alerts.data, stats })
      setFailure(null)
    } catch (error) {
      setFailure(error instanceof ApiFailure ? error.message : String(error))
    }
  }
  const more = async (cursor: string) => {
    const page = await call(api.webhooks.deliveries({ path: { id: webhook.id }, urlParams: { limit: 50, cursor } }))
    setPages((known) =>
      known === null
        ? known
        : { ...known, deliveries: [...known.deliveries, ...page.data], deliveriesCursor: page.nextCursor }
    )
  }
  useEffect(() => {
    refresh()
  }, [webhook.id])

  const resend = async (deliveryId: string) => {
    setBusy(true)
    try {
      await call(api.webhooks.resend({ path: { id: webhook.id, deliveryId } }))
      setNotice(`Delivery ${deliveryId} is being sent again.`)
      await refresh()
    } catch (error) {
      setNotice(error instanceof ApiFailure ? error.message : String(error))
    } finally {
      setBusy(false)
    }
  }

  const replay = async (event: Event) => {
    event.preventDefault()
    const seconds = fromLocalInput(since)
    if (seconds === undefined) {
      setReplayIssues([{ path: "since", message: "Pick a date and time." }])
      return
    }
    setBusy(true)
    try {
      const result = await call(api.webhooks.replay({ path: { id: webhook.id }, payload: { since: seconds } }))
      setReplayIssues([])
      setNotice(
        result.deliveries === 1
          ? "1 failed delivery is being sent again."
          : `${result.deliveries} failed deliveries are being sent again.`
      )
      await refresh()
    } catch (error) {
      if (error instanceof ApiFailure && error.issues.length > 0) setReplayIssues(error.issues)
      setNotice(error instanceof ApiFailure ? error.message : String(error))
    } finally {
      setBusy(false)
    }
  }

  return (
    <>
      <div class="toolbar">
        {canManage && (
          <>
            <a class="button" href={`#/webhooks/${webhook.id}/edit`}>
              Edit
            </a>
            <ToggleStatus
              api={api}
              webhook={webhook}
              onChanged={(changed, said) => {
                setNotice(said)
                props.onChanged(changed)
                refresh()
              }}
            />
            <button type="button" onClick={() => setRotating(true)}>
              Rotate secret
            </button>
          </>
        )}
        <button type="button" onClick={refresh}>
          Refresh
        </button>
      </div>
      <dl class="settings">
        <dt>Status</dt>
        <dd>
          <StatusBadge webhook={webhook} /> <span class="status-sentence">{statusSentence(webhook, time)}</span>
          {held !== null && <span class="held"> {held}</span>}
          {webhook.oldestHeldExpiresAt !== undefined && (
            <span class="held-expiry"> {heldExpiryText(webhook, time)}</span>
          )}
        </dd>
        <dt>Delivery</dt>
        <dd>{deliveryText(webhook)}</dd>
        <dt>Events</dt>
        <dd>{webhook.events.join(", ")}</dd>
        <dt>Filters</dt>
        <dd>{Object.keys(webhook.filters).length === 0 ? "none" : Object.keys(webhook.filters).join(", ")}</dd>
        <dt>Authentication</dt>
        <dd>{webhook.auth.type === "hmac" ? `hmac (${webhook.auth.scheme})` : webhook.auth.type}</dd>
        {webhook.auth.type === "hmac" && webhook.auth.previousSecretExpiresAt !== undefined && (
          <>
            <dt>Previous secret</dt>
            <dd class="overlap">also signs until {time(webhook.auth.previousSecretExpiresAt)}</dd>
          </>
        )}
      </dl>
      {rotating && (
        <RotateSecret
          api={api}
          webhook={webhook}
          onClose={(rotated) => {
            setRotating(false)
            if (rotated === null) return
            setNotice(rotationNotice(rotated, time))
            props.onChanged(rotated)
          }}
        />
      )}
      {failure !== null && (
        <p role="alert" class="error">
          {failure}
        </p>
      )}
      <Section id="health-title" title="Last 24 hours">
        {pages === null ? <p class="loading">Loading statistics…</p> : <DeliveryChart stats={pages.stats} />}
      </Section>
      <Section id="log-title" title="Delivery log">
        {canManage && (
          <form class="replay" onSubmit={replay} aria-label="Replay failed deliveries">
            <div class="control">
              <label for={controlId("replay.since")}>Replay failed deliveries since</label>
              <input
                id={controlId("replay.since")}
                type="datetime-local"
                value={since}
                {...invalidity(replayIssues, "since")}
                onInput={(e) => setSince(e.currentTarget.value)}
              />
              <FieldIssues issues={replayIssues} path="since" />
              <FieldIssues issues={replayIssues} path="until" />
            </div>
            <button type="submit" disabled={busy}>
              Replay failed deliveries
            </button>
          </form>
        )}
        <Notice text={notice} />
        {pages === null ? (
          <p class="loading">Loading deliveries…</p>
        ) : pages.deliveries.length === 0 ? (
          <p class="empty">No deliveries yet.</p>
        ) : (
          <ul class="cards deliveries">
            {pages.deliveries.map((delivery) => (
              <li class="card delivery" key={delivery.id}>
                <div class="delivery-head">
                  <span class={`status status-${delivery.status}`}>{delivery.status}</span>
                  <span class="event-type">{delivery.eventType}</span>
                  {delivery.orderingKey !== null && (
                    <span class="ordering-key" title="Ordering key">
                      {delivery.orderingKey}
                    </span>
                  )}
                  {canManage && (delivery.status === "succeeded" || delivery.status === "failed") && (
                    <button
                      type="button"
                      class="resend"
                      disabled={busy}
                      aria-label={`Resend delivery ${delivery.id}`}
                      onClick={() => resend(delivery.id)}
                    >
                      Resend
                    </button>
                  )}
                </div>
                <p class="ids">
                  <span>delivery {delivery.id}</span> <span>event {delivery.eventId}</span>
                </p>
                <ul class="attempts" aria-label={`Attempts of ${delivery.id}`}>
                  {delivery.attempts.map((attempt, index) => (
                    <li key={`${delivery.id}-${index}`}>
                      <span>#{index + 1}</span> <span>{time(attempt.at)}</span>{" "}
                      <span>{attempt.statusCode === null ? "no response" : `HTTP ${attempt.statusCode}`}</span>
                      {attempt.error !== null && <span class="error-class"> {attempt.error}</span>}{" "}
                      <span>{attempt.durationMs} ms</span>
                      {attempt.trigger === "manual" && <span class="trigger"> manual</span>}
                    </li>
                  ))}
                  {delivery.attempts.length === 0 && <li>not attempted yet</li>}
                </ul>
              </li>
            ))}
          </ul>
        )}
        {pages?.deliveriesCursor != null && (
          <button type="button" onClick={() => more(pages.deliveriesCursor!)}>
            Load more deliveries
          </button>
        )}
      </Section>
      <Section id="alerts-title" title="Failure alerts">
        {pages !== null && pages.alerts.length === 0 && <p class="empty">No failure alerts.</p>}
        {pages !== null && pages.alerts.length > 0 && (
          <ul class="cards alerts">
            {pages.alerts.map((alert) => (
              <li class="card" key={alert.id}>
                <p>
                  <strong>{time(alert.createdAt)}</strong> {alert.eventType}: {alert.reason}
                </p>
                <p class="ids">delivery {alert.deliveryId}</p>
              </li>
            ))}
          </ul>
        )}
      </Section>
    </>
  )
}
