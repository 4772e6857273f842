/**
 * The reference-data file: transport shapes, vehicle classes, products and custom property
 * definitions, validated whole at start-up.
 * @since 0.1.0
 */

import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import * as Issue from "@waybill/core/Issue"
import * as JsonDepth from "@waybill/core/JsonDepth"
import { ReferenceDataSet } from "@waybill/drafts/ReferenceData"
import { decodeAll as decodeDefinitions, type PropertyDefinition } from "@waybill/events/PropertyDefinition"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** The file shipped with the server, used when `WAYBILL_REFERENCE_DATA` is unset. @since 0.1.0 */
export const defaultPath = fileURLToPath(new URL("./reference-data.json", import.meta.url))

/** Everything the file holds. @since 0.1.0 */
export interface ReferenceDataFile extends ReferenceDataSet {
  readonly propertyDefinitions: ReadonlyArray<PropertyDefinition>
}

/** The file is missing, not JSON, or breaks the schema; names the file and every bad path. @since 0.1.0 */
export class ReferenceDataError extends Data.TaggedError("ReferenceDataError")<{
  readonly path: string
  readonly problems: ReadonlyArray<string>
}> {
  override get message() {
    return `Invalid reference data in ${this.path}:\n  ${this.problems.join("\n  ")}`
  }
}

/** Validates parsed file content; every problem found is reported. @since 0.1.0 */
export const parse = (path: string, json: unknown): Either.Either<ReferenceDataFile, ReferenceDataError> => {
  const fail = (issues: ReadonlyArray<Issue.Issue>) =>
    Either.left(
      new ReferenceDataError({
        path,
        problems: issues.map((issue) => `${issue.path === "" ? "(root)" : issue.path}: ${issue.message}`)
      })
    )
  // The schema decoders' messages quote refused values recursively: bound the file as a body is.
  const tooDeep = JsonDepth.depthIssue(json)
  if (Option.isSome(tooDeep)) return fail([tooDeep.value])
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return fail([Issue.make("", "must be a JSON object")])
  }
  const { propertyDefinitions = [], ...rest } = json as Record<string, unknown>
  const data = Schema.decodeUnknownEither(ReferenceDataSet)(rest, { errors: "all", onExcessProperty: "error" })
  const definitions = decodeDefinitions(propertyDefinitions)
  const issues = [
    ...(Either.isLeft(data) ? Issue.fromParseError(data.left) : []),
    ...(Either.isLeft(definitions) ? Issue.prefix(definitions.left, "propertyDefinitions") : [])
  ]
  if (Either.isLeft(data) || Either.isLeft(definitions)) return fail(issues)
  return Either.right({ ...data.right, propertyDefinitions: definitions.right })
}

/** Reads and validates a reference-data file. @since 0.1.0 */
export const load = (path: string): Effect.Effect<ReferenceDataFile, ReferenceDataError> =>
  Effect.gen(function* () {
    const text = yield* Effect.tryPromise({
      try: () => readFile(path, "utf8"),
      catch: (error) =>
        new ReferenceDataError({
          path,
          problems: [`cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}`]
        })
    })
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (error) => new ReferenceDataError({ path, problems: [`is not valid JSON: ${(error as Error).message}`] })
    })
    return yield* parse(path, json)
  })
