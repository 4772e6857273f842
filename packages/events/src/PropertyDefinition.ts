/**
 * Custom property definitions: which custom properties a workspace's entities carry, so that
 * `<entity>.properties.<id>` filter fields can be typed.
 * @since 0.1.0
 */
import type { Issue } from "@waybill/core/Issue"
import * as IssueM from "@waybill/core/Issue"
import * as JsonDepth from "@waybill/core/JsonDepth"
import type { WorkspaceId } from "@waybill/core/Workspace"
import { SelectOption } from "@waybill/filters/FilterField"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { entityNames } from "./Entity.js"
import { fromParseError } from "./internal/issues.js"
import { oneOf } from "./internal/schemas.js"

/** Property types; multiselect, tags and document are listed as filter fields but not selectable. @since 0.1.0 */
export const PropertyType = oneOf("text", "number", "checkbox", "select", "date", "multiselect", "tags", "document")

/** @since 0.1.0 */
export type PropertyType = typeof PropertyType.Type

// One path segment of `<entity>.properties.<id>`, never a name that path walking refuses.
const PropertyId = Schema.String.pipe(
  Schema.pattern(/^[^.\s]+$/, { message: () => "must be non-empty, without dots or whitespace" }),
  Schema.filter((id) => !["__proto__", "constructor", "prototype"].includes(id) || "is a reserved name")
)

const hasOptions = (type: PropertyType) => type === "select" || type === "multiselect"

/**
 * One custom property of an entity; `select` and `multiselect` list their options, and
 * conditions compare the option id.
 * @since 0.1.0
 */
export const PropertyDefinition = Schema.Struct({
  entity: oneOf(...entityNames),
  id: PropertyId,
  type: PropertyType,
  name: Schema.String,
  options: Schema.optionalWith(Schema.Array(SelectOption), { exact: true })
})
  .pipe(
    Schema.filter((definition) => {
      const issues: Array<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }> = []
      if (hasOptions(definition.type) && definition.options === undefined) {
        issues.push({ path: ["options"], message: `is required on a ${definition.type} property` })
      }
      if (!hasOptions(definition.type) && definition.options !== undefined) {
        issues.push({ path: ["options"], message: `is only allowed on select and multiselect properties` })
      }
      const seen = new Set<string>()
      definition.options?.forEach((option, index) => {
        if (seen.has(option.id)) issues.push({ path: ["options", index, "id"], message: "is a duplicate option id" })
        seen.add(option.id)
      })
      return issues
    })
  )
  .annotations({ identifier: "PropertyDefinition" })

/** @since 0.1.0 */
export type PropertyDefinition = typeof PropertyDefinition.Type

/**
 * Validates a list of definitions: every issue, paths relative to the list; an `(entity, id)`
 * pair may appear once. A list deeper than `JsonDepth.maxDepth` gets one issue, undecoded.
 * @since 0.1.0
 */
export const decodeAll = (input: unknown): Either.Either<ReadonlyArray<PropertyDefinition>, ReadonlyArray<Issue>> => {
  const tooDeep = JsonDepth.depthIssue(input)
  if (Option.isSome(tooDeep)) return Either.left([tooDeep.value])
  return Either.flatMap(
    Either.mapLeft(
      Schema.decodeUnknownEither(Schema.Array(PropertyDefinition))(input, {
        errors: "all",
        onExcessProperty: "error"
      }),
      (error): ReadonlyArray<Issue> => fromParseError(error)
    ),
    (definitions) => {
      const seen = new Set<string>()
      const issues: Array<Issue> = []
      definitions.forEach((definition, index) => {
        const key = `${definition.entity}.${definition.id}`
        if (seen.has(key))
          issues.push(IssueM.make(`${index}.id`, `duplicates the ${definition.entity} property ${key}`))
        seen.add(key)
      })
      return issues.length === 0 ? Either.right(definitions) : Either.left(issues)
    }
  )
}

/** The port to each workspace's property definitions. @since 0.1.0 */
export class PropertyDefinitions extends Context.Tag("@waybill/events/PropertyDefinitions")<
  PropertyDefinitions,
  {
    readonly forWorkspace: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<PropertyDefinition>>
  }
>() {}

/** The same definitions for every workspace. @since 0.1.0 */
export const layerFixed = (definitions: ReadonlyArray<PropertyDefinition>): Layer.Layer<PropertyDefinitions> =>
  Layer.succeed(PropertyDefinitions, PropertyDefinitions.of({ forWorkspace: () => Effect.succeed(definitions) }))
