/**
 * The nesting limit of JSON input (contract §1): objects and arrays nest at most 64 levels, the
 * top value being level 1. Every boundary that takes JSON from outside (the HTTP body reader,
 * and the library's own validators for callers that skip HTTP) checks it before anything
 * recursive (a schema decoder, `JSON.stringify`, a filter walk) sees the value, so no input,
 * however deep, can exhaust the stack.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Issue from "./Issue.js"

/**
 * The deepest nesting accepted, in levels of objects and arrays.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxDepth = 64

interface Frame {
  readonly value: object
  readonly depth: number
  readonly parent: Frame | undefined
  readonly key: string
}

const pathOf = (frame: Frame): string => {
  const segments: Array<string> = []
  for (let at: Frame | undefined = frame; at?.parent !== undefined; at = at.parent) segments.push(at.key)
  return Issue.joinPath(...segments.reverse())
}

/**
 * The issue for the first object or array found nested deeper than `limit` levels, at its dotted
 * path (under `path`), or none. Iterative, so it is safe on any depth, and it stops at the limit,
 * so a cyclic value (which no JSON text can produce) is reported as too deep rather than walked
 * forever. Own enumerable properties only.
 *
 * @since 0.1.0
 * @category validation
 */
export const depthIssue = (value: unknown, limit: number = maxDepth, path = ""): Option.Option<Issue.Issue> => {
  if (typeof value !== "object" || value === null) return Option.none()
  const stack: Array<Frame> = [{ value, depth: 1, parent: undefined, key: "" }]
  while (stack.length > 0) {
    const frame = stack.pop()!
    if (frame.depth > limit) {
      return Option.some(
        Issue.make(Issue.joinPath(path, pathOf(frame)), `nests deeper than ${limit} levels of objects and arrays`)
      )
    }
    const container = frame.value as Record<string, unknown>
    const keys = Object.keys(container)
    // Pushed last to first, so the first branch in document order is looked at first.
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index]!
      const child = container[key]
      if (typeof child === "object" && child !== null) {
        stack.push({ value: child, depth: frame.depth + 1, parent: frame, key })
      }
    }
  }
  return Option.none()
}

/**
 * Whether a value nests at most `limit` levels of objects and arrays.
 *
 * @since 0.1.0
 * @category validation
 */
export const isWithinDepth = (value: unknown, limit: number = maxDepth): boolean =>
  Option.isNone(depthIssue(value, limit))
