/**
 * Delivery filters: the filter schema, validation against an event's filter-field catalogue, and
 * compilation to a predicate over payloads.
 * @since 0.1.0
 */
import * as Issue from "@waybill/core/Issue"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as BerlinDay from "./BerlinDay.js"
import type { FilterField } from "./FilterField.js"
import { presenceOperators, valueOperators } from "./FilterField.js"
import * as codegen from "./internal/codegen.js"
import { interpret } from "./internal/interpret.js"
import * as plan_ from "./internal/plan.js"
import * as validate_ from "./internal/validate.js"

/** Groups nest at most this many levels; the top group is level 1. @since 0.1.0 */
export const MAX_DEPTH: number = plan_.MAX_DEPTH

/** A filter holds at most this many conditions (leaves), all groups together. @since 0.1.0 */
export const MAX_CONDITIONS: number = plan_.MAX_CONDITIONS

/** How a group combines its conditions: `all` (AND, the default) or `any` (OR). @since 0.1.0 */
export const Match = Schema.Literal("all", "any")

/** @since 0.1.0 */
export type Match = typeof Match.Type

const Field = Schema.String.annotations({
  description: "A dotted payload path from the event's filter-field catalogue, e.g. tour.properties.prop_region"
})

/** A calendar date `YYYY-MM-DD` (a real day), the operand of date conditions. @since 0.1.0 */
export const CalendarDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/),
  Schema.filter((text) => Option.isSome(BerlinDay.parseDate(text)), {
    message: () => "must be a calendar date YYYY-MM-DD"
  })
).annotations({ identifier: "CalendarDate" })

/** A condition on a text field; literal and case-sensitive. @since 0.1.0 */
export const TextCondition = Schema.Struct({
  field: Field,
  operator: Schema.Literal(...valueOperators.text),
  value: Schema.NonEmptyString
}).annotations({ identifier: "TextCondition" })

/** A condition on a number field. @since 0.1.0 */
export const NumberCondition = Schema.Struct({
  field: Field,
  operator: Schema.Literal(...valueOperators.number),
  value: Schema.Finite
}).annotations({ identifier: "NumberCondition" })

/** A condition on a checkbox field; no operand. @since 0.1.0 */
export const CheckboxCondition = Schema.Struct({
  field: Field,
  operator: Schema.Literal(...valueOperators.checkbox)
}).annotations({ identifier: "CheckboxCondition" })

/** A condition on a select field; the operand is an option id. @since 0.1.0 */
export const SelectCondition = Schema.Struct({
  field: Field,
  operator: Schema.Literal(...valueOperators.select),
  value: Schema.String.annotations({ description: "An option id of the field" })
}).annotations({ identifier: "SelectCondition" })

/** A condition on a date field, comparing Europe/Berlin calendar days. @since 0.1.0 */
export const DateCondition = Schema.Struct({
  field: Field,
  operator: Schema.Literal(...valueOperators.date),
  value: CalendarDate
}).annotations({ identifier: "DateCondition" })

/** `is_set` / `is_not_set`: presence only, whatever the field type; no operand. @since 0.1.0 */
export const PresenceCondition = Schema.Struct({
  field: Field,
  operator: Schema.Literal(...presenceOperators)
}).annotations({ identifier: "PresenceCondition" })

/** One condition: a field, an operator and (for most operators) an operand. @since 0.1.0 */
export const Condition = Schema.Union(
  TextCondition,
  NumberCondition,
  CheckboxCondition,
  SelectCondition,
  DateCondition,
  PresenceCondition
).annotations({ identifier: "FilterCondition" })

/** @since 0.1.0 */
export type Condition = typeof Condition.Type

/** A group of conditions and nested groups; `match` is filled in (`all`) when omitted. @since 0.1.0 */
export interface FilterGroup {
  readonly match: Match
  readonly conditions: ReadonlyArray<Condition | FilterGroup>
}

/** A group as sent: `match` may be omitted. @since 0.1.0 */
export interface FilterGroupEncoded {
  readonly match?: Match
  readonly conditions: ReadonlyArray<typeof Condition.Encoded | FilterGroupEncoded>
}

const Group: Schema.Schema<FilterGroup, FilterGroupEncoded> = Schema.Struct({
  match: Schema.optionalWith(Match, { default: () => "all" as const, exact: true }),
  conditions: Schema.Array(
    Schema.Union(
      Condition,
      Schema.suspend((): Schema.Schema<FilterGroup, FilterGroupEncoded> => Group)
    )
  ).pipe(Schema.minItems(1))
}).annotations({
  identifier: "FilterGroupNode",
  description: "A group of conditions and nested groups; match is all (AND, the default) or any (OR)"
})

const depthOf = (group: FilterGroup): number =>
  1 + Math.max(0, ...group.conditions.map((item) => ("conditions" in item ? depthOf(item) : 0)))

const leavesOf = (group: FilterGroup): number =>
  group.conditions.reduce((sum, item) => sum + ("conditions" in item ? leavesOf(item) : 1), 0)

/**
 * A whole filter: a group nested at most `MAX_DEPTH` levels, with at most `MAX_CONDITIONS` conditions.
 * The schema checks the depth only after decoding every level: decode untrusted input with `validateFilter`.
 * @since 0.1.0
 */
export const FilterGroup: Schema.Schema<FilterGroup, FilterGroupEncoded> = Group.pipe(
  Schema.filter((group) =>
    depthOf(group) > MAX_DEPTH
      ? `groups nest at most ${MAX_DEPTH} levels deep`
      : leavesOf(group) > MAX_CONDITIONS
        ? `a filter holds at most ${MAX_CONDITIONS} conditions`
        : undefined
  )
).annotations({
  identifier: "FilterGroup",
  description: `A delivery filter: groups nest at most ${MAX_DEPTH} levels (the top group is level 1), at most ${MAX_CONDITIONS} conditions in all`
})

/**
 * Validates a filter against its event's filter fields: every problem one issue, its path relative to
 * the filter (`conditions.1.value`). On success, the normalised filter (`match` filled in).
 * @since 0.1.0
 */
export const validateFilter = (
  input: unknown,
  fields: ReadonlyArray<FilterField>
): Either.Either<FilterGroup, ReadonlyArray<Issue.Issue>> => {
  const issues = validate_.validate(input, fields)
  if (issues.length > 0) return Either.left(issues)
  // The schema normalises; it accepts whatever the validator accepted (a test holds it to that).
  return Schema.decodeUnknownEither(FilterGroup)(input, { errors: "all" }).pipe(
    Either.mapLeft((error) => Issue.fromParseError(error))
  )
}

/** A compiled filter: whether a payload passes. Never throws. @since 0.1.0 */
export type Predicate = (payload: unknown) => boolean

/** @since 0.1.0 */
export interface CompileOptions {
  /** Payload roots (e.g. `"tour"`) whose absence makes every condition under `<root>.` false, negated ones too. */
  readonly guardedRoots?: ReadonlyArray<string>
  /** `"auto"` (default) generates code where `new Function` is allowed; `"closures"` forces closures. */
  readonly engine?: "auto" | "closures"
}

/**
 * Compiles a stored filter, or says why it cannot be evaluated (for the log). The predicate allocates
 * nothing and calls no `Intl`.
 * @since 0.1.0
 */
export const compileFilterEither = (
  filter: FilterGroup,
  options: CompileOptions = {}
): Either.Either<Predicate, ReadonlyArray<Issue.Issue>> =>
  Either.flatMap(plan_.plan(filter, options.guardedRoots ?? []), (root) => {
    if (options.engine !== "closures" && codegen.isAvailable()) {
      try {
        return Either.right(codegen.codegen(root))
      } catch {
        // Fall back to closures below; both engines mean the same.
      }
    }
    return Either.right(interpret(root))
  })

const failClosed: Predicate = () => false

/** Compiles a stored filter to a predicate; one that cannot be evaluated fails closed (always false). @since 0.1.0 */
export const compileFilter = (filter: FilterGroup, options?: CompileOptions): Predicate =>
  Either.getOrElse(compileFilterEither(filter, options), () => failClosed)
