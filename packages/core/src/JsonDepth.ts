/**
 * The nesting limit of JSON input: objects and arrays nest at most 64 levels, the top value being
 * level 1. Every boundary that takes JSON from outside checks it before anything recursive sees it.
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Issue from "./Issue.js"
import { type Frame, frameOf, nextKey, pathOf, tooDeepMessage } from "./internal/jsonWalk.js"

/** The deepest nesting accepted, in levels of objects and arrays. @since 0.1.0 */
export const maxDepth = 64

/**
 * The issue for the first object or array nested deeper than `limit` levels, at its path under `path`,
 * or none. Iterative and stopping at the limit, so safe on any depth (a cycle counts as too deep).
 * @since 0.1.0
 */
export const depthIssue = (value: unknown, limit: number = maxDepth, path = ""): Option.Option<Issue.Issue> => {
  if (typeof value !== "object" || value === null) return Option.none()
  if (limit < 1) return Option.some(Issue.make(path, tooDeepMessage(limit)))
  const stack: Array<Frame> = [frameOf(value, undefined, path)]
  for (let at = nextKey(stack); at !== undefined; at = nextKey(stack)) {
    const { frame, key } = at
    const child = frame.container[key]
    if (typeof child === "object" && child !== null) {
      if (frame.depth + 1 > limit) return Option.some(Issue.make(pathOf(frame, key), tooDeepMessage(limit)))
      stack.push(frameOf(child, frame, key))
    }
  }
  return Option.none()
}

/** Whether a value nests at most `limit` levels of objects and arrays. @since 0.1.0 */
export const isWithinDepth = (value: unknown, limit: number = maxDepth): boolean =>
  Option.isNone(depthIssue(value, limit))
