/**
 * Validation issues: what is wrong and where, as a dotted path into the input. Every validator
 * returns all the issues it finds, never only the first.
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** One problem found in an input. @since 0.1.0 */
export const Issue = Schema.Struct({
  path: Schema.String,
  message: Schema.String
}).annotations({ identifier: "Issue" })

/** @since 0.1.0 */
export type Issue = typeof Issue.Type

/** Builds an issue. @since 0.1.0 */
export const make = (path: string, message: string): Issue => ({ path, message })

/** Joins path segments into a dotted path, skipping empty segments. @since 0.1.0 */
export const joinPath = (...segments: ReadonlyArray<string | number>): string =>
  segments.filter((segment) => segment !== "").join(".")

/** Places issues found in a nested value under the path of that value. @since 0.1.0 */
export const prefix = (issues: ReadonlyArray<Issue>, path: string | number): Array<Issue> =>
  issues.map((issue) => make(joinPath(path, issue.path), issue.message))

/** Turns a schema `ParseError` into issues with dotted paths, one per problem. @since 0.1.0 */
export const fromParseError = (error: ParseResult.ParseError, path: string | number = ""): Array<Issue> =>
  tidy(
    ParseResult.ArrayFormatter.formatErrorSync(error).map((item) =>
      make(joinPath(path, ...item.path.map((segment) => String(segment))), item.message)
    )
  )

/**
 * Issues made readable: each once, and without the "Expected undefined" an optional field's union
 * adds beside the field's own message.
 * @since 0.1.0
 */
export const tidy = (issues: ReadonlyArray<Issue>): Array<Issue> => {
  const unique = Arr.dedupeWith(issues, (a, b) => a.path === b.path && a.message === b.message)
  return unique.filter(
    (issue) =>
      !issue.message.startsWith("Expected undefined, actual ") ||
      !unique.some((other) => other !== issue && other.path === issue.path)
  )
}
