/**
 * JSON taken from outside, checked in one walk before anything else sees it: nesting, no `__proto__`,
 * `constructor` or `prototype` key, finite numbers, storable text. What it refuses would otherwise be
 * changed silently (`1e400` is written as `null`), reach a prototype, or fail the write.
 * @since 0.1.0
 */
import * as Issue from "./Issue.js"
import { type Frame, frameOf, nextKey, pathOf, textProblemOf, tooDeepMessage } from "./internal/jsonWalk.js"
import { maxDepth as defaultMaxDepth } from "./JsonDepth.js"
import { maxIssues } from "./JsonText.js"

/** The keys refused anywhere in JSON input: the names through which objects reach their prototypes. @since 0.1.0 */
export const forbiddenKeys: ReadonlyArray<string> = ["__proto__", "constructor", "prototype"]

/** Whether a key is one of `forbiddenKeys`. @since 0.1.0 */
export const isForbiddenKey = (key: string): boolean =>
  key === "__proto__" || key === "constructor" || key === "prototype"

/**
 * What one walk found: the first object or array nested too deep (then nothing else), or every other
 * issue in document order, at most `JsonText.maxIssues`.
 * @since 0.1.0
 */
export interface Inspection {
  readonly tooDeep: Issue.Issue | undefined
  readonly issues: ReadonlyArray<Issue.Issue>
}

/** @since 0.1.0 */
export interface Options {
  /** Where the value sits, prefixed to every path. */
  readonly path?: string | undefined
  /** The deepest nesting accepted; `JsonDepth.maxDepth` by default. */
  readonly maxDepth?: number | undefined
  /** Whether strings and keys are checked as storable text (default `true`). */
  readonly text?: boolean | undefined
  /**
   * Whether values JSON cannot hold are issues (default `false`: parsed JSON holds none): functions,
   * symbols, bigints, `undefined` other than as a property's value (which `JSON.stringify` drops), and
   * objects other than plain objects and arrays (a `Date`, a `Map`). For values a caller built itself.
   */
  readonly jsonValues?: boolean | undefined
}

const NOT_FINITE = "is a number beyond the range of a double (±1.8e308), which would be changed to null"
const FORBIDDEN = "is a reserved key: __proto__, constructor and prototype are refused anywhere in a body"

const scalarIssue = (value: unknown, text: boolean): string | undefined => {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : NOT_FINITE
  if (text && typeof value === "string") return textProblemOf(value)
  return undefined
}

const notJson = (what: string) => `is not a JSON value (${what})`

// What JSON cannot hold, for `jsonValues`; `inProperty`: `undefined` there is an absent property.
const nonJsonIssue = (value: unknown, inProperty: boolean): string | undefined => {
  switch (typeof value) {
    case "function":
    case "symbol":
    case "bigint":
      return notJson(typeof value)
    case "undefined":
      return inProperty ? undefined : notJson("undefined")
    case "object": {
      if (value === null || Array.isArray(value)) return undefined
      const prototype = Object.getPrototypeOf(value)
      return prototype === Object.prototype || prototype === null
        ? undefined
        : notJson(`${prototype?.constructor?.name ?? "class"} object`)
    }
    default:
      return undefined
  }
}

/**
 * Walks a JSON value once, iteratively, and reports too deep nesting, forbidden keys, numbers that are
 * not finite and text that cannot be stored, at their paths. Own enumerable properties only.
 * @since 0.1.0
 */
export const inspect = (value: unknown, options: Options = {}): Inspection => {
  const path = options.path ?? ""
  const text = options.text ?? true
  const limit = options.maxDepth ?? defaultMaxDepth
  const jsonValues = options.jsonValues ?? false
  const topProblem = jsonValues ? nonJsonIssue(value, false) : undefined
  if (topProblem !== undefined) return { tooDeep: undefined, issues: [Issue.make(path, topProblem)] }
  if (typeof value !== "object" || value === null) {
    const problem = scalarIssue(value, text)
    return { tooDeep: undefined, issues: problem === undefined ? [] : [Issue.make(path, problem)] }
  }
  if (limit < 1) {
    return { tooDeep: Issue.make(path, tooDeepMessage(limit)), issues: [] }
  }
  const issues: Array<Issue.Issue> = []
  const stack: Array<Frame> = [frameOf(value, undefined, path)]
  for (let at = nextKey(stack); at !== undefined; at = nextKey(stack)) {
    const { frame, key } = at
    // The walk goes on past `maxIssues` (a deeper branch may still come), only collecting stops.
    const collecting = issues.length < maxIssues
    if (!frame.isArray && collecting) {
      if (isForbiddenKey(key)) issues.push(Issue.make(pathOf(frame, key), FORBIDDEN))
      const keyProblem = text ? textProblemOf(key) : undefined
      if (keyProblem !== undefined) issues.push(Issue.make(pathOf(frame), `has a key that ${keyProblem}`))
    }
    const child = frame.container[key]
    const nonJson = jsonValues ? nonJsonIssue(child, !frame.isArray) : undefined
    if (nonJson !== undefined) {
      if (collecting) issues.push(Issue.make(pathOf(frame, key), nonJson))
    } else if (typeof child === "object" && child !== null) {
      if (frame.depth + 1 > limit) return { tooDeep: Issue.make(pathOf(frame, key), tooDeepMessage(limit)), issues: [] }
      stack.push(frameOf(child, frame, key))
    } else if (collecting) {
      const problem = scalarIssue(child, text)
      if (problem !== undefined) issues.push(Issue.make(pathOf(frame, key), problem))
    }
  }
  return { tooDeep: undefined, issues: issues.slice(0, maxIssues) }
}

/** Every issue `inspect` finds, as one list: the nesting issue alone when there is one. @since 0.1.0 */
export const issues = (value: unknown, options: Options = {}): ReadonlyArray<Issue.Issue> => {
  const found = inspect(value, options)
  return found.tooDeep === undefined ? found.issues : [found.tooDeep]
}
