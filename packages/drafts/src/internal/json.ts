/** Helpers for reading a draft's leniently stored JSON without trusting its shape. */

/** A plain JSON object: not null, not an array. */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** An own property of an object, never one inherited through the prototype chain. */
export const own = (value: unknown, key: string): unknown =>
  isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined

/** The value at a dotted path, numeric segments indexing arrays; `undefined` if any is missing. */
export const atPath = (root: unknown, path: string): unknown => {
  let current = root
  for (const segment of path.split(".")) {
    if (Array.isArray(current) && /^(0|[1-9]\d*)$/.test(segment)) {
      current = current[Number(segment)]
    } else {
      current = own(current, segment)
    }
    if (current === undefined) return undefined
  }
  return current
}

/** Whether a value counts as "given" for a required field: not absent, not null, not blank text. */
export const isPresent = (value: unknown): boolean =>
  value !== undefined && value !== null && !(typeof value === "string" && value.trim() === "")
