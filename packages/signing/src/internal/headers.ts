import { MalformedHeader, MissingHeader } from "../VerificationError.js"

/** Fetch `Headers` (or anything with a case-insensitive `get`). */
export interface HeaderGetter {
  readonly get: (name: string) => string | null
}

/** Node's `IncomingHttpHeaders` and plain records; names are matched case-insensitively. */
export type HeaderRecord = { readonly [name: string]: string | ReadonlyArray<string> | number | undefined }

export type HeadersInput = HeaderGetter | HeaderRecord

const isGetter = (headers: HeadersInput): headers is HeaderGetter => typeof (headers as HeaderGetter).get === "function"

const lookup = (headers: HeaderRecord, lower: string, display: string): HeaderRecord[string] => {
  // Node lower-cases incoming names and senders spell them as documented: the scan is rarely needed.
  if (Object.hasOwn(headers, lower)) return headers[lower]
  if (Object.hasOwn(headers, display)) return headers[display]
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === lower) return headers[key]
  }
  return undefined
}

/**
 * The single value of a header (`display` names it in errors). A header sent more than once is
 * malformed: Node gives an array, Fetch a comma-joined string that the callers' format checks refuse.
 */
export const single = (
  headers: HeadersInput,
  lower: string,
  display: string
): MissingHeader | MalformedHeader | string => {
  let value: HeaderRecord[string] | null
  if (isGetter(headers)) {
    value = headers.get(lower)
  } else {
    value = lookup(headers, lower, display)
  }
  if (Array.isArray(value)) {
    if (value.length > 1) return new MalformedHeader({ header: display, reason: "sent more than once" })
    value = value[0]
  }
  if (typeof value === "number") value = String(value)
  if (typeof value !== "string") return new MissingHeader({ header: display })
  const trimmed = value.trim()
  if (trimmed === "") return new MissingHeader({ header: display })
  return trimmed
}
