/**
 * The API key the operator signed in with: in this tab's `sessionStorage` only (never a URL,
 * cookie or `localStorage`, contract §5), forgotten on sign-out and when the tab closes.
 */
const storageKey = "waybill.console.apiKey"

export const savedKey = (): string | null => sessionStorage.getItem(storageKey)

export const saveKey = (key: string): void => sessionStorage.setItem(storageKey, key)

export const forgetKey = (): void => sessionStorage.removeItem(storageKey)
