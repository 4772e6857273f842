/**
 * The live region a page says what an action did in ("Webhook deleted.", …), read out by
 * screen readers when it changes.
 */

/** The notice, empty while there is none. */
export const Notice = ({ text }: { readonly text: string | null }) => (
  <output class="notice" aria-live="polite">
    {text ?? ""}
  </output>
)
