/**
 * The console's shell: sign-in (an API key, or a console token from `#token=`), then Settings →
 * Webhooks with a route per page in the URL's hash (`#/`, `#/new`, `#/webhooks/<id>`,
 * `#/webhooks/<id>/edit`), so it works under any mount path and the browser's back button moves
 * between pages. A console token's access is shown in the header; when it ends, the page says so
 * and offers the host's return link.
 */
import type { WebhookResponse } from "@waybill/webhooks/Webhook"
import { useEffect, useRef, useState } from "preact/hooks"
import { CanManage, useCanManage } from "./access.js"
import { type Api, ApiFailure, call, signInWith, UNAUTHORIZED, type Who } from "./api.js"
import { SignIn } from "./SignIn.js"
import { forgetKey, returnLink, savedKey, saveKey } from "./session.js"
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

interface SignedIn {
  readonly api: Api
  readonly who: Who
}

const clockTime = (epochSeconds: number) => {
  const at = new Date(epochSeconds * 1000)
  const time = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hourCycle: "h23" })
  return at.toDateString() === new Date().toDateString()
    ? time
    : `${at.toLocaleDateString([], { day: "numeric", month: "short" })}, ${time}`
}

/** "read-only access, until 14:05": what a console token lets its user do, and until when. */
export const accessText = (who: Who): string | null =>
  who.auth === "console-token" && who.expiresAt !== null
    ? `${who.scope === "read" ? "read-only" : "manage"} access, until ${clockTime(who.expiresAt)}`
    : null

export const App = () => {
  const [signedIn, setSignedIn] = useState<SignedIn | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  // Why a console token's access is over; its user signs in again through the host, not here.
  const [ended, setEnded] = useState<string | null>(null)
  const [restoring, setRestoring] = useState(savedKey() !== null)
  const end = (token: boolean, message: string) => {
    forgetKey()
    setRestoring(false)
    setSignedIn(null)
    if (token) setEnded(message)
    else setNotice(message)
    location.hash = "#/"
  }
  useEffect(() => {
    const key = savedKey()
    if (key === null) return
    signInWith(key).then(setSignedIn, (error: unknown) => {
      if (key.startsWith("wbc_") && error instanceof ApiFailure && error.status === 401) {
        end(true, "Your access has expired or was revoked.")
      } else setRestoring(false)
    })
  }, [])
  useEffect(() => {
    if (signedIn === null) return
    const token = signedIn.who.auth === "console-token"
    const refused = () =>
      end(token, token ? "Your access has expired or was revoked." : "Your key is no longer accepted.")
    addEventListener(UNAUTHORIZED, refused)
    const expiresAt = signedIn.who.expiresAt
    const timer =
      expiresAt === null
        ? undefined
        : setTimeout(
            () => end(true, `Your access expired at ${clockTime(expiresAt)}.`),
            Math.max(0, expiresAt * 1000 - Date.now())
          )
    return () => {
      removeEventListener(UNAUTHORIZED, refused)
      clearTimeout(timer)
    }
  }, [signedIn])
  if (ended !== null) return <Ended message={ended} />
  if (signedIn === null) {
    if (restoring) return <p class="loading">Loading the Waybill console…</p>
    return (
      <SignIn
        notice={notice}
        onSignedIn={(key, api, who) => {
          saveKey(key)
          setNotice(null)
          setSignedIn({ api, who })
        }}
      />
    )
  }
  return (
    <CanManage.Provider value={signedIn.who.scope === "manage"}>
      <Signedin
        api={signedIn.api}
        who={signedIn.who}
        onSignOut={() => end(signedIn.who.auth === "console-token", "You signed out.")}
      />
    </CanManage.Provider>
  )
}

// The end of a console token's access: what happened, and the way back to the host's page.
const Ended = (props: { readonly message: string }) => {
  const back = returnLink()
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [])
  return (
    <main class="sign-in">
      <h1 ref={heading} tabIndex={-1}>
        Waybill console
      </h1>
      <p class="notice" role="alert">
        {props.message}
      </p>
      {back === null ? (
        <p>Open the console again from the application you came from.</p>
      ) : (
        <a class="button primary" href={back} target="_top">
          Back to {new URL(back).host}
        </a>
      )}
    </main>
  )
}

const Signedin = (props: { readonly api: Api; readonly who: Who; readonly onSignOut: () => void }) => {
  const route = useRoute()
  const heading = useRef<HTMLHeadingElement>(null)
  const canManage = useCanManage()
  const access = accessText(props.who)
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
        {access !== null && (
          <p class="access">
            {props.who.label === null ? "" : `${props.who.label} · `}
            {access}
          </p>
        )}
        <button type="button" class="link" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <main>
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {route.page === "list" && <WebhookList api={props.api} />}
        {!canManage && (route.page === "new" || route.page === "edit") && (
          <p class="notice">This page changes webhooks; your access is read-only.</p>
        )}
        {canManage && route.page === "new" && (
          <WebhookForm api={props.api} onSaved={(saved) => (location.hash = `#/webhooks/${saved.id}`)} />
        )}
        {(route.page === "detail" || (canManage && route.page === "edit")) && (
          <WithWebhook api={props.api} id={route.id}>
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

// Loads one webhook for a page; another workspace's or a deleted one is "not found" (a refused
// credential ends the sign-in in the shell).
const WithWebhook = (props: {
  readonly api: Api
  readonly id: string
  readonly children: (webhook: WebhookResponse, replace: (webhook: WebhookResponse) => void) => preact.ComponentChildren
}) => {
  const [state, setState] = useState<WebhookResponse | string | null>(null)
  useEffect(() => {
    setState(null)
    call(props.api.webhooks.get({ path: { id: props.id } })).then(setState, (error: unknown) =>
      setState(error instanceof ApiFailure ? error.message : String(error))
    )
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
