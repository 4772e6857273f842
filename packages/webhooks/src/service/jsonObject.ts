/**
 * The start of validating a request body that must be a JSON object: its own keys only, and an
 * issue for each key the request does not know.
 */
import * as Issue from "@waybill/core/Issue"
import * as Either from "effect/Either"

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const own = (record: Record<string, unknown>, key: string): unknown =>
  Object.hasOwn(record, key) ? record[key] : undefined

/**
 * `input` as a record with one issue for each key not in `known` (the caller adds its own), or
 * one issue at the root when it is not a JSON object.
 */
export const openObject = (
  input: unknown,
  known: ReadonlySet<string>
): Either.Either<
  { readonly record: Record<string, unknown>; readonly issues: Array<Issue.Issue> },
  ReadonlyArray<Issue.Issue>
> =>
  isRecord(input)
    ? Either.right({
        record: input,
        issues: Object.keys(input)
          .filter((key) => !known.has(key))
          .map((key) => Issue.make(key, "is not a known field"))
      })
    : Either.left([Issue.make("", "must be a JSON object")])
