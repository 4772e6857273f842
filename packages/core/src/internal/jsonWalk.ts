// The one walk behind `JsonDepth`, `JsonText` and `JsonInput`: an explicit stack (safe on any depth),
// and a path built from the parents only when an issue needs one.
import * as Issue from "../Issue.js"

// Without the `u` flag a regular expression sees UTF-16 code units, which is what a surrogate is.
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** What is wrong with a string as stored text, or `undefined` when nothing is. */
export const textProblemOf = (text: string): string | undefined =>
  text.includes("\u0000")
    ? "contains a NUL character (\\u0000), which cannot be stored"
    : UNPAIRED_SURROGATE.test(text)
      ? "contains an unpaired surrogate (such as \\ud800 alone), which is not Unicode text"
      : undefined

/** A container being walked. */
export interface Frame {
  readonly container: Record<string, unknown>
  readonly keys: ReadonlyArray<string>
  readonly isArray: boolean
  readonly parent: Frame | undefined
  /** This container's key under its parent (the top frame's is the caller's path). */
  readonly key: string
  /** 1 for the top value. */
  readonly depth: number
  /** The index in `keys` of the next key to visit. */
  next: number
}

/** The frame for a container under `parent` at `key`. */
export const frameOf = (value: object, parent: Frame | undefined, key: string): Frame => ({
  container: value as Record<string, unknown>,
  keys: Object.keys(value),
  isArray: Array.isArray(value),
  parent,
  key,
  depth: parent === undefined ? 1 : parent.depth + 1,
  next: 0
})

/**
 * The next key in document order, finished frames popped on the way; `undefined` when the walk is over.
 * The caller pushes a child's frame to go into it.
 */
export const nextKey = (stack: Array<Frame>): { readonly frame: Frame; readonly key: string } | undefined => {
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    if (frame.next < frame.keys.length) return { frame, key: frame.keys[frame.next++]! }
    stack.pop()
  }
  return undefined
}

// A key as a path segment: itself, or quoted when it cannot be stored, so the path shows its
// escapes rather than a NUL or a lone surrogate. Every walker spells a path the same way.
const segmentOf = (frame: Frame, key: string): string =>
  frame.isArray || textProblemOf(key) === undefined ? key : JSON.stringify(key)

/** The dotted path of `frame`, or of its child at `key`. The top frame's key is used as is. */
export const pathOf = (frame: Frame, key?: string): string => {
  const segments: Array<string> = key === undefined ? [] : [segmentOf(frame, key)]
  for (let at: Frame = frame; ; at = at.parent) {
    if (at.parent === undefined) {
      segments.push(at.key)
      break
    }
    segments.push(segmentOf(at.parent, at.key))
  }
  return Issue.joinPath(...segments.reverse())
}

/** The message of a nesting issue. */
export const tooDeepMessage = (limit: number): string => `nests deeper than ${limit} levels of objects and arrays`
