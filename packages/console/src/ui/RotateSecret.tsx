/**
 * Rotating a webhook's secret (contract §8), in a modal dialog: a new HMAC secret with an
 * overlap during which the previous one keeps signing beside it, or new Basic or Bearer
 * credentials, which replace the old ones at once (the dialog says so before anything is sent).
 */
import type { WebhookResponse } from "@waybill/webhooks/Webhook"
import { useEffect, useRef, useState } from "preact/hooks"
import { type Api, ApiFailure, call } from "./api.js"
import { InputControl, IssueSummary, type Issues, SelectControl } from "./Issues.js"

/** The overlaps offered: how long the previous HMAC secret keeps signing. */
const overlaps: ReadonlyArray<{ readonly seconds: number; readonly label: string }> = [
  { seconds: 3_600, label: "1 hour" },
  { seconds: 86_400, label: "24 hours (recommended)" },
  { seconds: 604_800, label: "7 days (the longest)" },
  { seconds: 0, label: "None: replace the previous secret at once" }
]

const fields = {
  hmac: { field: "secret", label: "New shared secret" },
  basic: { field: "password", label: "New password" },
  bearer: { field: "token", label: "New token" }
} as const

/** What happened, in a sentence for the page's live region. */
export const rotationNotice = (rotated: WebhookResponse, at: (seconds: number) => string): string => {
  const auth = rotated.auth
  if (auth.type === "bearer") return "The new token replaced the old one: every delivery from now on carries it."
  if (auth.type === "basic")
    return "The new credentials replaced the old ones: every delivery from now on carries them."
  return auth.previousSecretExpiresAt === undefined
    ? "The new secret replaced the previous one: every delivery from now on is signed with it alone."
    : `The new secret signs every delivery from now on; the previous one also signs until ${at(auth.previousSecretExpiresAt)}.`
}

export const RotateSecret = (props: {
  readonly api: Api
  readonly webhook: WebhookResponse
  readonly onClose: (rotated: WebhookResponse | null) => void
}) => {
  const { auth } = props.webhook
  const field = fields[auth.type]
  const dialog = useRef<HTMLDialogElement>(null)
  const usernameInput = useRef<HTMLInputElement>(null)
  const secretInput = useRef<HTMLInputElement>(null)
  const [secret, setSecret] = useState("")
  const [username, setUsername] = useState(auth.type === "basic" ? auth.username : "")
  const [overlap, setOverlap] = useState(86_400)
  const [failure, setFailure] = useState<ApiFailure | null>(null)
  const [saving, setSaving] = useState(false)
  const issues: Issues = failure?.issues ?? []
  useEffect(() => {
    dialog.current?.showModal()
    const first = auth.type === "basic" ? usernameInput : secretInput
    first.current?.focus()
  }, [])

  const submit = async (event: Event) => {
    event.preventDefault()
    setSaving(true)
    const request: Record<string, unknown> = { type: auth.type, [field.field]: secret }
    if (auth.type === "basic") request.username = username
    if (auth.type === "hmac") request.scheme = auth.scheme
    try {
      // The typed client's request type describes a valid body; the API validates what is sent.
      const payload = (auth.type === "hmac" ? { auth: request, overlapSeconds: overlap } : { auth: request }) as never
      const rotated = await call(props.api.webhooks.rotate({ path: { id: props.webhook.id }, payload }))
      props.onClose(rotated)
    } catch (error) {
      setFailure(error instanceof ApiFailure ? error : new ApiFailure(0, String(error), []))
      setSaving(false)
    }
  }

  return (
    <dialog ref={dialog} aria-labelledby="rotate-title" class="rotate" onClose={() => props.onClose(null)}>
      <h2 id="rotate-title">Rotate secret</h2>
      <form onSubmit={submit} noValidate>
        {auth.type === "hmac" ? (
          <p>
            Every delivery from now on is signed with the new secret. During the overlap it also carries a signature
            made with the previous secret, so your receiver can switch to the new one when it is ready.
          </p>
        ) : (
          <p class="warning" id="rotate-at-once">
            {auth.type === "bearer" ? "The new token replaces" : "The new credentials replace"} the old at once: one
            Authorization header cannot carry two. Make your receiver accept the new{" "}
            {auth.type === "bearer" ? "token" : "password"} before you rotate.
          </p>
        )}
        {failure !== null && <IssueSummary message={failure.message} issues={issues} />}
        {auth.type === "basic" && (
          <InputControl
            issues={issues}
            path="auth.username"
            label="Username"
            inputRef={usernameInput}
            type="text"
            value={username}
            autoComplete="off"
            onValue={setUsername}
          />
        )}
        <InputControl
          issues={issues}
          path={`auth.${field.field}`}
          label={field.label}
          paths={[`auth.${field.field}`, "auth", "auth.type", "auth.scheme"]}
          hint={`${
            auth.type === "hmac"
              ? auth.scheme === "standard-webhooks"
                ? "whsec_ followed by base64 of 24 to 64 random bytes."
                : "16 to 512 characters."
              : "1 to 512 characters."
          } Write-only: it is never shown again.`}
          inputRef={secretInput}
          type="password"
          value={secret}
          autoComplete="new-password"
          onValue={setSecret}
        />
        {auth.type === "hmac" && (
          <SelectControl
            issues={issues}
            path="overlapSeconds"
            label="The previous secret also signs for"
            value={String(overlap)}
            options={overlaps.map((option) => ({ value: String(option.seconds), label: option.label }))}
            onValue={(seconds) => setOverlap(Number(seconds))}
          />
        )}
        <div class="form-actions">
          <button type="submit" class="primary" disabled={saving}>
            {saving ? "Rotating…" : "Rotate secret"}
          </button>
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  )
}
