/**
 * Text that can be stored: `JSON.parse` accepts `\u0000` (NUL) and unpaired surrogates, which
 * PostgreSQL's `json` and `text` refuse. Every boundary that takes JSON from outside refuses them.
 * @since 0.1.0
 */
import * as Issue from "./Issue.js"
import { type Frame, frameOf, nextKey, pathOf, textProblemOf } from "./internal/jsonWalk.js"
import { maxDepth } from "./JsonDepth.js"

/** The most issues one check reports: a body full of NULs gets a bounded answer. @since 0.1.0 */
export const maxIssues = 20

/** What is wrong with a string as stored text, or `undefined` when nothing is. @since 0.1.0 */
export const problemOf: (text: string) => string | undefined = textProblemOf

// A JSON text spells a NUL or a surrogate only as a `\u` escape (raw, a NUL is malformed JSON,
// and invalid UTF-8 is decoded as U+FFFD): without such an escape there is nothing to look for.
const SUSPICIOUS_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/

/** Whether a JSON text may hold strings `textIssues` would refuse: one scan that spares the walk. @since 0.1.0 */
export const mayHoldTextIssues = (json: string): boolean => SUSPICIOUS_ESCAPE.test(json)

/**
 * Every string and key that cannot be stored, as issues at their paths under `path` (a key's at its
 * object's), at most `maxIssues`. Iterative and stopping at `JsonDepth.maxDepth`: safe on any value.
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
