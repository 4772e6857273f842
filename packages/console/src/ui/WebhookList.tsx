/**
 * Settings → Webhooks: every webhook of the workspace (URL, its status and, when disabled, how
 * many deliveries it holds and from when they expire, description, events, rate limit and
 * ordering, auth type and its masked secret, and until when a rotated secret's predecessor still
 * signs), with links to its delivery log and its form, Disable / Enable, and delete with
 * confirmation.
 */
import type { WebhookResponse } from "@waybill/webhooks/Webhook"
import { useEffect, useRef, useState } from "preact/hooks"
import { useCanManage } from "./access.js"
import { type Api, ApiFailure, call } from "./api.js"
import { Notice } from "./Notice.js"
import { heldExpiryText, heldText, StatusBadge, ToggleStatus } from "./WebhookStatus.js"

const time = (seconds: number) => `${new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`

const maskedSecret = (auth: WebhookResponse["auth"]) =>
  auth.type === "basic"
    ? `Basic, user ${auth.username}, password ${auth.password}`
    : auth.type === "bearer"
      ? `Bearer, token ${auth.token}`
      : `HMAC, secret ${auth.secret}${
          auth.previousSecretExpiresAt === undefined
            ? ""
            : `; the previous secret also signs until ${time(auth.previousSecretExpiresAt)}`
        }`

export const WebhookList = ({ api }: { readonly api: Api }) => {
  const canManage = useCanManage()
  const [webhooks, setWebhooks] = useState<ReadonlyArray<WebhookResponse> | null>(null)
  const [cursor, setCursor] = useState<string | null>(null)
  const [failure, setFailure] = useState<string | null>(null)
  const [deleting, setDeleting] = useState<WebhookResponse | null>(null)
  // What the last Disable or Enable did, for the live region.
  const [notice, setNotice] = useState<string | null>(null)

  const load = async (after: string | null) => {
    try {
      const page = await call(api.webhooks.list({ urlParams: after === null ? {} : { cursor: after } }))
      setWebhooks((known) => [...(after === null ? [] : (known ?? [])), ...page.data])
      setCursor(page.nextCursor)
    } catch (error) {
      setFailure(error instanceof ApiFailure ? error.message : String(error))
    }
  }
  useEffect(() => {
    load(null)
  }, [api])

  return (
    <>
      {canManage && (
        <div class="toolbar">
          <a class="button primary" href="#/new">
            New webhook
          </a>
        </div>
      )}
      {failure !== null && (
        <p role="alert" class="error">
          {failure}
        </p>
      )}
      <Notice text={notice} />
      {webhooks === null ? (
        <p class="loading">Loading webhooks…</p>
      ) : webhooks.length === 0 ? (
        <p class="empty">No webhooks yet. Create one to receive events.</p>
      ) : (
        <ul class="cards webhook-list">
          {webhooks.map((webhook) => (
            <WebhookCard
              key={webhook.id}
              api={api}
              webhook={webhook}
              onChanged={(changed, said) => {
                setWebhooks((known) => (known ?? []).map((item) => (item.id === changed.id ? changed : item)))
                setNotice(said)
              }}
              onDelete={() => setDeleting(webhook)}
            />
          ))}
        </ul>
      )}
      {cursor !== null && (
        <button type="button" onClick={() => load(cursor)}>
          Load more
        </button>
      )}
      {deleting !== null && (
        <ConfirmDelete
          api={api}
          webhook={deleting}
          onClose={(deleted) => {
            setDeleting(null)
            if (deleted) setWebhooks((known) => (known ?? []).filter((webhook) => webhook.id !== deleting.id))
          }}
        />
      )}
    </>
  )
}

/** One webhook of the list. */
const WebhookCard = (props: {
  readonly api: Api
  readonly webhook: WebhookResponse
  readonly onChanged: (webhook: WebhookResponse, notice: string) => void
  readonly onDelete: () => void
}) => {
  const { webhook } = props
  const held = heldText(webhook)
  const expiry = heldExpiryText(webhook, time)
  const canManage = useCanManage()
  return (
    <li class="card">
      <h2 class="url">
        <a href={`#/webhooks/${webhook.id}`}>{webhook.url}</a>
      </h2>
      <p class="status-line">
        <StatusBadge webhook={webhook} />
        {held !== null && <span class="held">{held}</span>}
        {expiry !== null && <span class="held-expiry">{expiry}</span>}
      </p>
      {webhook.description !== null && <p class="description">{webhook.description}</p>}
      <dl>
        <dt>Events</dt>
        <dd>
          {webhook.events.join(", ")}
          {Object.keys(webhook.filters).length > 0 && (
            <span class="badge">{Object.keys(webhook.filters).length} filtered</span>
          )}
        </dd>
        <dt>Delivery</dt>
        <dd>{deliveryText(webhook)}</dd>
        <dt>Authentication</dt>
        <dd>{maskedSecret(webhook.auth)}</dd>
      </dl>
      <div class="card-actions">
        <a href={`#/webhooks/${webhook.id}`}>Deliveries and alerts</a>
        {canManage && (
          <>
            <a href={`#/webhooks/${webhook.id}/edit`}>Edit</a>
            <ToggleStatus api={props.api} webhook={webhook} onChanged={props.onChanged} link />
            <button type="button" class="link danger" onClick={props.onDelete}>
              Delete
            </button>
          </>
        )}
      </div>
    </li>
  )
}

/** Rate limit and ordering, in words. */
export const deliveryText = (webhook: WebhookResponse) =>
  `${webhook.rateLimitPerSecond === null ? "no rate limit" : `at most ${webhook.rateLimitPerSecond} per second`}, ${
    webhook.ordering === "fifo"
      ? "one at a time in event order (FIFO)"
      : webhook.ordering === "key"
        ? "one at a time per ordering key"
        : "unordered"
  }`

/** A modal confirmation (Escape or Cancel keep the webhook). */
const ConfirmDelete = (props: {
  readonly api: Api
  readonly webhook: WebhookResponse
  readonly onClose: (deleted: boolean) => void
}) => {
  const dialog = useRef<HTMLDialogElement>(null)
  const cancel = useRef<HTMLButtonElement>(null)
  const [failure, setFailure] = useState<string | null>(null)
  useEffect(() => {
    dialog.current?.showModal()
    // The safe choice has the focus: Enter or Space does not delete.
    cancel.current?.focus()
  }, [])
  const confirm = async () => {
    try {
      await call(props.api.webhooks.delete({ path: { id: props.webhook.id } }))
      props.onClose(true)
    } catch (error) {
      setFailure(error instanceof ApiFailure ? error.message : String(error))
    }
  }
  return (
    <dialog ref={dialog} aria-labelledby="delete-title" onClose={() => props.onClose(false)}>
      <h2 id="delete-title">Delete this webhook?</h2>
      <p>
        <strong>{props.webhook.url}</strong> stops receiving events. Its delivery log and alerts are deleted with it.
      </p>
      {failure !== null && (
        <p role="alert" class="error">
          {failure}
        </p>
      )}
      <div class="form-actions">
        <button type="button" class="danger" onClick={confirm}>
          Delete webhook
        </button>
        <button type="button" ref={cancel} onClick={() => dialog.current?.close()}>
          Cancel
        </button>
      </div>
    </dialog>
  )
}
