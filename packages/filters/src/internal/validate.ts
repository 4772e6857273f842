/** Registration-time validation of a filter against a filter-field catalogue: every problem one issue. */
import * as Issue from "@waybill/core/Issue"
import * as Option from "effect/Option"
import * as BerlinDay from "../BerlinDay.js"
import type { FilterField, Operator } from "../FilterField.js"
import { operatorsFor } from "../FilterField.js"
import { isOperator, type Operand, semantics } from "./operators.js"
import { isRecord, MAX_CONDITIONS, MAX_DEPTH, own } from "./plan.js"

const GROUP_KEYS = new Set(["match", "conditions"])
const CONDITION_KEYS = new Set(["field", "operator", "value"])

/** Lists at most `limit` names, so a huge catalogue does not make a huge message. */
const list = (names: ReadonlyArray<string>, limit = 20): string =>
  names.length <= limit ? names.join(", ") : `${names.slice(0, limit).join(", ")} and ${names.length - limit} more`

const quote = (text: string) => JSON.stringify(text)

/** What a value is, for messages: "a string", "an array", "null", "NaN". */
const describe = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "an array"
  if (typeof value === "number" && !Number.isFinite(value)) return String(value)
  const type = typeof value
  return type === "undefined" ? "undefined" : type === "object" ? "an object" : `a ${type}`
}

/** What is wrong with an operand of the given kind, or undefined. */
const checkOperand = (
  operand: Operand,
  value: unknown,
  operator: Operator,
  field?: FilterField
): string | undefined => {
  const present = value !== undefined
  switch (operand) {
    case "none":
      return present ? `must be omitted: ${operator} takes no value` : undefined
    case "text":
      if (!present) return "is required"
      if (typeof value !== "string") return `must be a non-empty string, not ${describe(value)}`
      return value === "" ? "must be a non-empty string" : undefined
    case "number":
      if (!present) return "is required"
      return typeof value === "number" && Number.isFinite(value)
        ? undefined
        : `must be a finite number, not ${describe(value)}`
    case "text-or-number":
      if (!present) return "is required"
      if (typeof value === "string") return value === "" ? "must be a non-empty string" : undefined
      return typeof value === "number" && Number.isFinite(value)
        ? undefined
        : `must be a non-empty string or a finite number, not ${describe(value)}`
    case "option": {
      if (!present) return "is required"
      if (typeof value !== "string") return `must be an option id (a string), not ${describe(value)}`
      if (field === undefined) return value === "" ? "must be a non-empty string" : undefined
      const ids = (field.options ?? []).map((option) => option.id)
      return ids.includes(value)
        ? undefined
        : ids.length === 0
          ? `${quote(value)} is not an option of ${quote(field.path)}, which has no options`
          : `${quote(value)} is not an option of ${quote(field.path)}; options: ${list(ids)}`
    }
    case "date":
      if (!present) return "is required"
      return typeof value === "string" && Option.isSome(BerlinDay.parseDate(value))
        ? undefined
        : "must be a calendar date YYYY-MM-DD"
  }
}

/** The operand a field of this type takes for a value operator. */
const operandOfField = (field: FilterField, operator: Operator): Operand => {
  const own = semantics[operator].operand
  if (own === "none") return "none"
  switch (field.type) {
    case "text":
      return "text"
    case "number":
      return "number"
    case "select":
      return "option"
    case "date":
      return "date"
    default:
      return own
  }
}

export const validate = (input: unknown, fields: ReadonlyArray<FilterField>): Array<Issue.Issue> => {
  const issues: Array<Issue.Issue> = []
  const byPath = new Map(fields.map((field) => [field.path, field] as const))
  let leaves = 0

  const unknownKeys = (record: Record<string, unknown>, allowed: ReadonlySet<string>, path: string, what: string) => {
    for (const key of Object.keys(record)) {
      if (!allowed.has(key)) issues.push(Issue.make(Issue.joinPath(path, key), `is not allowed; ${what}`))
    }
  }

  const group = (value: unknown, path: string, depth: number): void => {
    if (!isRecord(value)) {
      issues.push(Issue.make(path, `must be a group { match, conditions }, not ${describe(value)}`))
      return
    }
    if (depth > MAX_DEPTH) {
      // Not descended: the limit also bounds the work done on hostile input.
      issues.push(Issue.make(path, `groups nest at most ${MAX_DEPTH} levels deep (the top group is level 1)`))
      return
    }
    unknownKeys(value, GROUP_KEYS, path, "a group has only match and conditions")
    const match = own(value, "match")
    if (match !== undefined && match !== "all" && match !== "any") {
      issues.push(Issue.make(Issue.joinPath(path, "match"), 'must be "all" or "any"'))
    }
    const conditions = own(value, "conditions")
    const conditionsPath = Issue.joinPath(path, "conditions")
    if (!Array.isArray(conditions)) {
      issues.push(Issue.make(conditionsPath, "must be an array of conditions and groups"))
      return
    }
    if (conditions.length === 0) {
      issues.push(Issue.make(conditionsPath, "must not be empty: a group needs at least one condition"))
      return
    }
    conditions.forEach((item: unknown, i) => {
      const itemPath = Issue.joinPath(conditionsPath, i)
      if (isRecord(item) && Object.hasOwn(item, "conditions")) group(item, itemPath, depth + 1)
      else condition(item, itemPath)
    })
  }

  const condition = (value: unknown, path: string): void => {
    leaves++
    if (!isRecord(value)) {
      issues.push(
        Issue.make(
          path,
          `must be a condition { field, operator, value } or a group { match, conditions }, not ${describe(value)}`
        )
      )
      return
    }
    unknownKeys(value, CONDITION_KEYS, path, "a condition has only field, operator and value")
    const fieldPath = Issue.joinPath(path, "field")
    const operatorPath = Issue.joinPath(path, "operator")
    const valuePath = Issue.joinPath(path, "value")
    const name = own(value, "field")
    const operator = own(value, "operator")
    const operand = own(value, "value")

    let field: FilterField | undefined
    if (typeof name !== "string") {
      issues.push(Issue.make(fieldPath, "must be a field path (a string) from the event's filter fields"))
    } else if (!byPath.has(name)) {
      issues.push(Issue.make(fieldPath, `unknown field ${quote(name)} for this event`))
    } else if (!byPath.get(name)!.selectable) {
      const unselectable = byPath.get(name)!
      issues.push(Issue.make(fieldPath, `field ${quote(name)} (${unselectable.type}) cannot be used in a filter`))
    } else {
      field = byPath.get(name)
    }

    if (!isOperator(operator)) {
      const allowed = field === undefined ? [] : allowedOperators(field)
      issues.push(
        Issue.make(
          operatorPath,
          operator === undefined
            ? "is required"
            : allowed.length > 0
              ? `${typeof operator === "string" ? quote(operator) : describe(operator)} is not an operator of ${
                  field!.type
                } field ${quote(field!.path)}; allowed: ${list(allowed)}`
              : `${typeof operator === "string" ? quote(operator) : describe(operator)} is not a known operator`
        )
      )
      return
    }

    let problem: string | undefined
    if (field !== undefined) {
      const allowed = allowedOperators(field)
      if (allowed.includes(operator)) {
        problem = checkOperand(operandOfField(field, operator), operand, operator, field)
      } else {
        issues.push(
          Issue.make(
            operatorPath,
            `${operator} is not allowed on ${field.type} field ${quote(field.path)}; allowed: ${list(allowed)}`
          )
        )
        problem = checkOperand(semantics[operator].operand, operand, operator)
      }
    } else {
      // The field is unusable, but the operand can still be checked against the operator.
      problem = checkOperand(semantics[operator].operand, operand, operator)
    }
    if (problem !== undefined) issues.push(Issue.make(valuePath, problem))
  }

  try {
    group(input, "", 1)
  } catch {
    // Only a getter or proxy can throw here; JSON input never does.
    issues.push(Issue.make("", "could not be read"))
  }
  if (leaves > MAX_CONDITIONS) {
    issues.push(Issue.make("", `a filter holds at most ${MAX_CONDITIONS} conditions, found ${leaves}`))
  }
  return issues
}

/** The operators a catalogue field allows: its own list, within what its type offers. */
export const allowedOperators = (field: FilterField): ReadonlyArray<Operator> => {
  const offered = operatorsFor(field.type)
  return field.operators.filter((operator) => offered.includes(operator))
}
