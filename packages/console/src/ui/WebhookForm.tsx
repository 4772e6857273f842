/**
 * Creating and editing a webhook: URL, description, events, delivery (rate limit and ordering),
 * authentication and a filter per subscribed event. Editing never receives a secret: a secret field left empty keeps the stored
 * value while the auth type is unchanged; a changed type asks for its secret (contract §5).
 */
import type { EventType } from "@waybill/events/EventType"
import type { FilterField } from "@waybill/filters/FilterField"
import type { WebhookResponse } from "@waybill/webhooks/Webhook"
import { useEffect, useRef, useState } from "preact/hooks"
import { type Api, ApiFailure, call } from "./api.js"
import { EventPicker } from "./EventPicker.js"
import { FilterBuilder } from "./FilterBuilder.js"
import { emptyGroup, fromFilter, type GroupNode, toFilter } from "./filterModel.js"
import { FieldIssues, InputControl, IssueSummary, type Issues, SelectControl } from "./Issues.js"
import { Section } from "./Section.js"

type AuthType = "hmac" | "basic" | "bearer"
type Scheme = "waybill" | "standard-webhooks"
type Ordering = "none" | "fifo" | "key"

const secretLabels: Record<AuthType, { readonly field: string; readonly label: string; readonly hint: string }> = {
  hmac: { field: "secret", label: "Shared secret", hint: "16 to 512 characters; signs every delivery (HMAC-SHA256)." },
  basic: { field: "password", label: "Password", hint: "1 to 512 characters." },
  bearer: { field: "token", label: "Token", hint: "1 to 512 characters; sent as Authorization: Bearer." }
}

const authTypes: ReadonlyArray<{ readonly value: AuthType; readonly label: string }> = [
  { value: "hmac", label: "HMAC signature" },
  { value: "basic", label: "Basic (username and password)" },
  { value: "bearer", label: "Bearer token" }
]

const schemes: ReadonlyArray<{ readonly value: Scheme; readonly label: string }> = [
  { value: "waybill", label: "Waybill (X-Signature headers)" },
  { value: "standard-webhooks", label: "Standard Webhooks (webhook-signature headers)" }
]

const orderings: ReadonlyArray<{ readonly value: Ordering; readonly label: string }> = [
  { value: "none", label: "None: deliveries in parallel" },
  { value: "fifo", label: "FIFO: one at a time, in event order" },
  { value: "key", label: "By key: one at a time per ordering key, keys in parallel" }
]

interface Form {
  readonly url: string
  readonly description: string
  readonly events: ReadonlyArray<EventType>
  readonly authType: AuthType
  readonly scheme: Scheme
  readonly username: string
  readonly secret: string
  readonly filters: Readonly<Record<string, GroupNode>>
  /** As typed; empty: no limit. */
  readonly rateLimit: string
  readonly ordering: Ordering
}

/** The fields a single control edits: those held as text or as one of a few values. */
type FieldKey = { readonly [K in keyof Form]: Form[K] extends string ? K : never }[keyof Form]

const blank: Form = {
  url: "https://",
  description: "",
  events: [],
  authType: "hmac",
  scheme: "waybill",
  username: "",
  secret: "",
  filters: {},
  rateLimit: "",
  ordering: "none"
}

const formOf = (webhook: WebhookResponse): Form => ({
  url: webhook.url,
  description: webhook.description ?? "",
  events: webhook.events,
  authType: webhook.auth.type,
  scheme: webhook.auth.type === "hmac" ? webhook.auth.scheme : "waybill",
  username: webhook.auth.type === "basic" ? webhook.auth.username : "",
  secret: "",
  filters: Object.fromEntries(Object.entries(webhook.filters).map(([event, filter]) => [event, fromFilter(filter)])),
  rateLimit: webhook.rateLimitPerSecond === null ? "" : String(webhook.rateLimitPerSecond),
  ordering: webhook.ordering
})

// The rate limit as sent: empty is no limit (null); a number as a number; anything else as typed,
// so the API's issue says what is wrong with it.
const rateLimitOf = (typed: string): number | string | null => {
  const trimmed = typed.trim()
  if (trimmed === "") return null
  return /^-?[0-9]+(\.[0-9]+)?$/.test(trimmed) ? Number(trimmed) : trimmed
}

// Filter fields per event type, loaded once each.
const useFilterFields = (api: Api, events: ReadonlyArray<string>) => {
  const [fields, setFields] = useState<Readonly<Record<string, ReadonlyArray<FilterField>>>>({})
  useEffect(() => {
    for (const event of events) {
      if (fields[event] !== undefined) continue
      call(api.webhooks.filterFields({ urlParams: { event } })).then(
        (answer) => setFields((known) => ({ ...known, [event]: answer.data })),
        () => setFields((known) => ({ ...known, [event]: [] }))
      )
    }
  }, [api, events.join(",")])
  return fields
}

export const WebhookForm = (props: {
  readonly api: Api
  readonly existing?: WebhookResponse | undefined
  readonly onSaved: (webhook: WebhookResponse) => void
}) => {
  const { api, existing } = props
  const [form, setForm] = useState<Form>(existing === undefined ? blank : formOf(existing))
  const [failure, setFailure] = useState<ApiFailure | null>(null)
  const [saving, setSaving] = useState(false)
  const summary = useRef<HTMLDivElement>(null)
  const filtered = form.events.filter((event) => form.filters[event] !== undefined)
  const fields = useFilterFields(api, filtered)
  const issues: Issues = failure?.issues ?? []
  const keepsSecret = existing !== undefined && existing.auth.type === form.authType
  const secret =
    form.authType === "hmac" && form.scheme === "standard-webhooks"
      ? {
          ...secretLabels.hmac,
          hint: 'whsec_ followed by base64 of 24 to 64 random bytes (e.g. "whsec_" + 32 random bytes in base64); signs as Standard Webhooks.'
        }
      : secretLabels[form.authType]
  const set = (next: Partial<Form>) => setForm((current) => ({ ...current, ...next }))
  // The props that bind a control to the form field `key`, reported on at `path` (the request's
  // key, by default the field's): its issues, its value and its edits.
  const field = <Key extends FieldKey>(key: Key, path: string = key) => ({
    issues,
    path,
    value: form[key],
    onValue: (value: Form[Key]) => set({ [key]: value })
  })

  useEffect(() => {
    if (failure !== null) summary.current?.querySelector<HTMLElement>(".issue-summary")?.focus()
  }, [failure])

  const payload = () => {
    const auth: Record<string, unknown> = { type: form.authType }
    if (form.authType === "basic") auth.username = form.username
    if (form.authType === "hmac") auth.scheme = form.scheme
    if (form.secret !== "" || !keepsSecret) auth[secret.field] = form.secret
    const filters = Object.fromEntries(
      filtered.map((event) => [event, toFilter(form.filters[event]!, fields[event] ?? [])])
    )
    return {
      url: form.url.trim(),
      events: form.events,
      ...(filtered.length > 0 ? { filters } : {}),
      auth,
      ...(form.description.trim() === "" ? {} : { description: form.description.trim() }),
      rateLimitPerSecond: rateLimitOf(form.rateLimit),
      ordering: form.ordering
    }
  }

  const submit = async (event: Event) => {
    event.preventDefault()
    setSaving(true)
    try {
      // The typed client's request types describe a valid body; the API validates what is sent.
      const body = payload() as never
      const saved = await call<WebhookResponse, unknown>(
        existing === undefined
          ? api.webhooks.register({ payload: body })
          : api.console.updateWebhook({ path: { id: existing.id }, payload: body })
      )
      props.onSaved(saved)
    } catch (error) {
      setFailure(error instanceof ApiFailure ? error : new ApiFailure(0, String(error), []))
    } finally {
      setSaving(false)
    }
  }

  return (
    <form class="webhook-form" onSubmit={submit} noValidate>
      <div ref={summary}>
        {failure !== null && (
          <IssueSummary
            message={
              failure.issues.length > 0
                ? `The webhook was not saved: ${failure.issues.length} problem${failure.issues.length === 1 ? "" : "s"}.`
                : failure.message
            }
            issues={failure.issues}
          />
        )}
      </div>

      <Section id="form-target" title="Target">
        <InputControl
          {...field("url")}
          label="URL"
          hint="An https:// address that receives a POST per event."
          type="url"
          autoComplete="url"
        />
        <InputControl {...field("description")} label="Description (optional)" type="text" />
      </Section>

      <Section id="form-events" title="Events">
        <EventPicker selected={form.events} issues={issues} onChange={(events) => set({ events })} />
      </Section>

      <Section id="form-delivery" title="Delivery">
        <InputControl
          {...field("rateLimit", "rateLimitPerSecond")}
          label="Rate limit (deliveries per second, optional)"
          hint="1 to 10000 attempts started per second, over every server process; empty for no limit. Deliveries over the limit wait; none fails for it."
          type="text"
          inputMode="numeric"
        />
        <SelectControl
          {...field("ordering")}
          label="Ordering"
          hint="FIFO sends a delivery only after the previous one has ended (succeeded, or failed after its retry)."
          options={orderings}
        />
      </Section>

      <Section id="form-authentication" title="Authentication">
        <SelectControl
          {...field("authType", "auth.type")}
          label="Method"
          paths={["auth", "auth.type"]}
          options={authTypes}
          onValue={(authType) => set({ authType, secret: "" })}
        />
        {form.authType === "hmac" && (
          <SelectControl {...field("scheme", "auth.scheme")} label="Signature scheme" options={schemes} />
        )}
        {form.authType === "basic" && (
          <InputControl {...field("username", "auth.username")} label="Username" type="text" autoComplete="off" />
        )}
        <InputControl
          {...field("secret", `auth.${secret.field}`)}
          label={secret.label}
          hint={`${keepsSecret ? "Leave empty to keep the stored value, or type a new one. " : ""}${secret.hint} Write-only: it is never shown again.`}
          type="password"
          autoComplete="new-password"
          placeholder={keepsSecret ? "unchanged" : ""}
        />
      </Section>

      <Section id="form-filters" title="Filters">
        {form.events.length === 0 && <p class="hint">Pick events first; each may have a filter.</p>}
        <FieldIssues issues={issues} path="filters" />
        {form.events.map((event) => {
          const root = form.filters[event]
          const path = `filters.${event}`
          return (
            <div class="event-filter" key={event}>
              <h3>{event}</h3>
              <FieldIssues issues={issues} path={path} />
              {root === undefined ? (
                <>
                  <p class="hint">Every {event} event is delivered.</p>
                  <button type="button" onClick={() => set({ filters: { ...form.filters, [event]: emptyGroup() } })}>
                    Add a filter for {event}
                  </button>
                </>
              ) : fields[event] === undefined ? (
                <p class="hint">Loading the fields of {event}…</p>
              ) : (
                <>
                  <FilterBuilder
                    root={root}
                    fields={fields[event]!}
                    path={path}
                    issues={issues}
                    onChange={(next) => set({ filters: { ...form.filters, [event]: next } })}
                  />
                  <button
                    type="button"
                    class="link danger"
                    onClick={() => {
                      const { [event]: _removed, ...rest } = form.filters
                      set({ filters: rest })
                    }}
                  >
                    Remove the filter of {event}
                  </button>
                </>
              )}
            </div>
          )
        })}
      </Section>

      <div class="form-actions">
        <button type="submit" class="primary" disabled={saving}>
          {saving ? "Saving…" : existing === undefined ? "Create webhook" : "Save changes"}
        </button>
        <a href={existing === undefined ? "#/" : `#/webhooks/${existing.id}`}>Cancel</a>
      </div>
    </form>
  )
}
