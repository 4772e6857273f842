/** Sign-in with an API key: checked against the API, then kept in this tab's session only. */
import { useState } from "preact/hooks"
import { type Api, ApiFailure, signInWith, type Who } from "./api.js"

export const SignIn = (props: {
  readonly notice: string | null
  readonly onSignedIn: (key: string, api: Api, who: Who) => void
}) => {
  const [key, setKey] = useState("")
  const [failure, setFailure] = useState<string | null>(null)
  const [checking, setChecking] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    const trimmed = key.trim()
    if (trimmed === "") return setFailure("Paste an API key.")
    setChecking(true)
    try {
      const { api, who } = await signInWith(trimmed)
      props.onSignedIn(trimmed, api, who)
    } catch (error) {
      setFailure(
        error instanceof ApiFailure && error.status === 401
          ? "This API key was not accepted."
          : error instanceof ApiFailure
            ? error.message
            : String(error)
      )
    } finally {
      setChecking(false)
    }
  }
  return (
    <main class="sign-in">
      <h1>Waybill console</h1>
      <p>Sign in with an API key of your workspace to manage its webhooks.</p>
      {props.notice !== null && <p class="notice">{props.notice}</p>}
      <form onSubmit={submit} noValidate>
        <div class="control">
          <label for="api-key">API key</label>
          <input
            id="api-key"
            type="password"
            autoComplete="off"
            value={key}
            aria-invalid={failure !== null}
            aria-describedby={failure === null ? undefined : "api-key-error"}
            onInput={(event) => setKey(event.currentTarget.value)}
          />
          {failure !== null && (
            <p class="field-error" id="api-key-error" role="alert">
              {failure}
            </p>
          )}
          <p class="hint">Kept in this browser tab only, until you sign out or close the tab.</p>
        </div>
        <button type="submit" class="primary" disabled={checking}>
          {checking ? "Checking…" : "Sign in"}
        </button>
      </form>
    </main>
  )
}
