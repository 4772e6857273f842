import type { Issue } from "@waybill/core/Issue"
import * as IssueM from "@waybill/core/Issue"
import type * as ParseResult from "effect/ParseResult"

const nullAlternative = /^Expected null, actual /

const covers = (path: string, other: string) => other === path || path === "" || other.startsWith(`${path}.`)

/**
 * Every issue of a parse error with a dotted path. A nullable field reports what was wrong with
 * the value, not also that it is not `null` (Effect lists each member of a failed union).
 */
export const fromParseError = (error: ParseResult.ParseError): Array<Issue> => {
  const issues = IssueM.fromParseError(error)
  return issues.filter(
    (issue, index) =>
      !nullAlternative.test(issue.message) ||
      !issues.some((other, otherIndex) => otherIndex !== index && covers(issue.path, other.path))
  )
}
