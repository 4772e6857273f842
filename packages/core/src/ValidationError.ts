/** The error every validator fails with: a sentence and every issue found. @since 0.1.0 */
import * as Schema from "effect/Schema"
import { Issue } from "./Issue.js"

/** Input broke one or more rules. `issues` lists every violation, each with its path. @since 0.1.0 */
export class ValidationError extends Schema.TaggedError<ValidationError>("@waybill/core/ValidationError")(
  "ValidationError",
  {
    message: Schema.String,
    issues: Schema.Array(Issue)
  }
) {}

/** Builds a `ValidationError` whose message summarises the issues. @since 0.1.0 */
export const fromIssues = (issues: ReadonlyArray<Issue>, what = "request"): ValidationError =>
  new ValidationError({
    message:
      issues.length === 1
        ? `The ${what} is invalid: ${issues[0]!.path === "" ? "" : `${issues[0]!.path}: `}${issues[0]!.message}`
        : `The ${what} is invalid: ${issues.length} problems found`,
    issues
  })
