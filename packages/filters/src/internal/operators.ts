/** What each operator means: its operand and the positive test it negates (or not), for validation and compilation. */
import type { Operator } from "../FilterField.js"

/** The positive tests; every operator is one of these, possibly negated. */
export type Base =
  | "equals"
  | "contains"
  | "begins_with"
  | "ends_with"
  | "gt"
  | "gte"
  | "lt"
  | "lte"
  | "checked"
  | "is"
  | "on"
  | "before"
  | "after"
  | "on_or_before"
  | "on_or_after"
  | "set"

/** The operand an operator takes, independent of the field it is used on. */
export type Operand = "text" | "text-or-number" | "number" | "option" | "date" | "none"

export interface Semantics {
  readonly base: Base
  readonly negated: boolean
  readonly operand: Operand
}

const positive = (base: Base, operand: Operand): Semantics => ({ base, negated: false, operand })
const negated = (base: Base, operand: Operand): Semantics => ({ base, negated: true, operand })

export const semantics: Readonly<Record<Operator, Semantics>> = {
  equals: positive("equals", "text-or-number"),
  not_equals: negated("equals", "text-or-number"),
  contains: positive("contains", "text"),
  not_contains: negated("contains", "text"),
  begins_with: positive("begins_with", "text"),
  not_begins_with: negated("begins_with", "text"),
  ends_with: positive("ends_with", "text"),
  not_ends_with: negated("ends_with", "text"),
  gt: positive("gt", "number"),
  gte: positive("gte", "number"),
  lt: positive("lt", "number"),
  lte: positive("lte", "number"),
  is_checked: positive("checked", "none"),
  is_not_checked: negated("checked", "none"),
  is: positive("is", "option"),
  is_not: negated("is", "option"),
  on: positive("on", "date"),
  not_on: negated("on", "date"),
  before: positive("before", "date"),
  after: positive("after", "date"),
  on_or_before: positive("on_or_before", "date"),
  on_or_after: positive("on_or_after", "date"),
  is_set: positive("set", "none"),
  is_not_set: negated("set", "none")
}

export const isOperator = (value: unknown): value is Operator =>
  typeof value === "string" && Object.hasOwn(semantics, value)
