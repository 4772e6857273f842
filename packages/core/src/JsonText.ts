/**
 * Text that can be stored: JSON may spell characters that PostgreSQL's `json` and `text` types
 * refuse, `\u0000` (NUL) and unpaired surrogates (`\ud800` alone, which is no Unicode character
 * at all). `JSON.parse` accepts both; a database write of them fails. Every boundary that takes
 * JSON from outside (the HTTP body reader, and the validators of what is stored as JSON, for
 * callers that skip HTTP) refuses them with an issue at their path, so they never reach storage
 * as a failure of the server's own.
 * @since 0.1.0
 */
import * as Issue from "./Issue.js"
import { type Frame, frameOf, nextKey, pathOf, textProblemOf } from "./internal/jsonWalk.js"
import { maxDepth } from "./JsonDepth.js"

/**
 * The most issues one check reports: a body full of NULs gets a bounded answer.
 * @since 0.1.0
 */
export const maxIssues = 20

/**
 * What is wrong with a string as stored text, or `undefined` when nothing is.
 * @since 0.1.0
 */
export const problemOf: (text: string) => string | undefined = textProblemOf

// A JSON text spells a NUL or a surrogate only as a `\u` escape (raw, a NUL is malformed JSON,
// and invalid UTF-8 is decoded as U+FFFD): without such an escape there is nothing to look for.
const SUSPICIOUS_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/

/**
 * Whether a JSON text may hold strings `textIssues` would refuse. A text without a `\u0000` or
 * surrogate escape never does, and that one scan spares the walk over a parsed body.
 * @since 0.1.0
 */
export const mayHoldTextIssues = (json: string): boolean => SUSPICIOUS_ESCAPE.test(json)

/**
 * Every string and key of a JSON value that cannot be stored as text (see `problemOf`), as
 * issues at their dotted paths under `path`, in document order, at most `maxIssues` of them. A
 * key's issue is at the path of its object. Iterative, and it stops at `JsonDepth.maxDepth`
 * levels, so it is safe on any value.
 * @since 0.1.0
 */
export const textIssues = (value: unknown, path = ""): ReadonlyArray<Issue.Issue> => {
  if (typeof value === "string") {
    const problem = problemOf(value)
    return problem === undefined ? [] : [Issue.make(path, problem)]
  }
  if (typeof value !== "object" || value === null) return []
  const issues: Array<Issue.Issue> = []
  const stack: Array<Frame> = [frameOf(value, undefined, path)]
  for (let at = nextKey(stack); at !== undefined && issues.length < maxIssues; at = nextKey(stack)) {
    const { frame, key } = at
    const keyProblem = frame.isArray ? undefined : problemOf(key)
    if (keyProblem !== undefined) issues.push(Issue.make(pathOf(frame), `has a key that ${keyProblem}`))
    const child = frame.container[key]
    if (typeof child === "string") {
      const problem = problemOf(child)
      if (problem !== undefined) issues.push(Issue.make(pathOf(frame, key), problem))
    } else if (typeof child === "object" && child !== null && frame.depth < maxDepth) {
      stack.push(frameOf(child, frame, key))
    }
  }
  return issues.slice(0, maxIssues)
}
