/**
 * The credential the console signed in with, an API key or a console token: in this tab's
 * `sessionStorage` only (never a URL, cookie or `localStorage`, contract §5), forgotten on
 * sign-out and when the tab closes.
 */
const storageKey = "waybill.console.apiKey"

export const savedKey = (): string | null => sessionStorage.getItem(storageKey)

export const saveKey = (key: string): void => sessionStorage.setItem(storageKey, key)

export const forgetKey = (): void => sessionStorage.removeItem(storageKey)

const TOKEN_FRAGMENT = /^#token=(wbc_[A-Za-z0-9_-]{1,200})$/

/**
 * Takes a console token from the address's fragment (`#token=wbc_…`, which browsers never send to
 * a server): kept like a key, and removed from the address bar and the history at once.
 */
export const adoptTokenFromFragment = (): void => {
  if (!location.hash.startsWith("#token=")) return
  const match = TOKEN_FRAGMENT.exec(location.hash)
  history.replaceState(history.state, "", `${location.pathname}${location.search}`)
  if (match !== null) saveKey(match[1]!)
}

/** Where the host asked the console to send its user back to (`?return=`, checked by the server). */
export const returnLink = (): string | null =>
  document.querySelector<HTMLMetaElement>('meta[name="waybill-return"]')?.content ?? null
