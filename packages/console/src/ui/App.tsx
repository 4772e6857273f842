/**
 * The console's shell: sign-in, then Settings → Webhooks with a route per page in the URL's
 * hash (`#/`, `#/new`, `#/webhooks/<id>`, `#/webhooks/<id>/edit`), so it works under any mount
 * path and the browser's back button moves between pages.
 */
import type { WebhookResponse } from "@waybill/webhooks/Webhook"
import { useEffect, useRef, useState } from "preact/hooks"
import { type Api, ApiFailure, call, connect } from "./api.js"
import { SignIn } from "./SignIn.js"
import { forgetKey, savedKey, saveKey } from "./session.js"
import { WebhookDetail } from "./WebhookDetail.js"
import { WebhookForm } from "./WebhookForm.js"
import { WebhookList } from "./WebhookList.js"

type Route =
  | { readonly page: "list" }
  | { readonly page: "new" }
  | { readonly page: "detail" | "edit"; readonly id: string }

const parse = (hash: string): Route => {
  const edit = /^#\/webhooks\/([^/]+)\/edit$/.exec(hash)
  if (edit) return { page: "edit", id: decodeURIComponent(edit[1]!) }
  const detail = /^#\/webhooks\/([^/]+)$/.exec(hash)
  if (detail) return { page: "detail", id: decodeURIComponent(detail[1]!) }
  return hash === "#/new" ? { page: "new" } : { page: "list" }
}

const useRoute = () => {
  const [route, setRoute] = useState(() => parse(location.hash))
  useEffect(() => {
    const onChange = () => setRoute(parse(location.hash))
    addEventListener("hashchange", onChange)
    return () => removeEventListener("hashchange", onChange)
  }, [])
  return route
}

export const App = () => {
  const [session, setSession] = useState<{ readonly api: Api } | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [restoring, setRestoring] = useState(savedKey() !== null)
  useEffect(() => {
    const key = savedKey()
    if (key !== null)
      connect(key).then(
        (api) => setSession({ api }),
        () => setRestoring(false)
      )
  }, [])
  if (session === null) {
    if (restoring) return <p class="loading">Loading the Waybill console…</p>
    return (
      <SignIn
        notice={notice}
        onSignedIn={(key, api) => {
          saveKey(key)
          setNotice(null)
          setSession({ api })
        }}
      />
    )
  }
  const signOut = (message: string | null) => {
    forgetKey()
    setRestoring(false)
    setNotice(message)
    setSession(null)
    location.hash = "#/"
  }
  return <Signedin api={session.api} onSignOut={signOut} />
}

const Signedin = (props: { readonly api: Api; readonly onSignOut: (notice: string | null) => void }) => {
  const route = useRoute()
  const heading = useRef<HTMLHeadingElement>(null)
  const title =
    route.page === "new"
      ? "New webhook"
      : route.page === "edit"
        ? "Edit webhook"
        : route.page === "detail"
          ? "Webhook"
          : "Webhooks"
  useEffect(() => {
    document.title = `${title} · Waybill console`
    heading.current?.focus()
  }, [route.page, route.page === "list" || route.page === "new" ? "" : route.id])
  return (
    <>
      <header class="top">
        <nav aria-label="Breadcrumb">
          <ol class="breadcrumb">
            <li>Settings</li>
            <li>
              <a href="#/">Webhooks</a>
            </li>
          </ol>
        </nav>
        <button type="button" class="link" onClick={() => props.onSignOut(null)}>
          Sign out
        </button>
      </header>
      <main>
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {route.page === "list" && <WebhookList api={props.api} />}
        {route.page === "new" && (
          <WebhookForm api={props.api} onSaved={(saved) => (location.hash = `#/webhooks/${saved.id}`)} />
        )}
        {(route.page === "detail" || route.page === "edit") && (
          <WithWebhook
            api={props.api}
            id={route.id}
            onUnauthorized={() => props.onSignOut("Your key is no longer accepted.")}
          >
            {(webhook, replace) =>
              route.page === "edit" ? (
                <WebhookForm
                  api={props.api}
                  existing={webhook}
                  onSaved={(saved) => (location.hash = `#/webhooks/${saved.id}`)}
                />
              ) : (
                <>
                  <p class="subtitle">{webhook.url}</p>
                  <WebhookDetail api={props.api} webhook={webhook} onChanged={replace} />
                </>
              )
            }
          </WithWebhook>
        )}
      </main>
    </>
  )
}

// Loads one webhook for a page; another workspace's or a deleted one is "not found".
const WithWebhook = (props: {
  readonly api: Api
  readonly id: string
  readonly onUnauthorized: () => void
  readonly children: (webhook: WebhookResponse, replace: (webhook: WebhookResponse) => void) => preact.ComponentChildren
}) => {
  const [state, setState] = useState<WebhookResponse | string | null>(null)
  useEffect(() => {
    setState(null)
    call(props.api.webhooks.get({ path: { id: props.id } })).then(setState, (error: unknown) => {
      if (error instanceof ApiFailure && error.status === 401) props.onUnauthorized()
      else setState(error instanceof ApiFailure ? error.message : String(error))
    })
  }, [props.id])
  if (state === null) return <p class="loading">Loading…</p>
  if (typeof state === "string")
    return (
      <p role="alert" class="error">
        {state}
      </p>
    )
  return <>{props.children(state, setState)}</>
}
