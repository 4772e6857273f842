/**
 * Turns a stored filter into an evaluation plan; what cannot be evaluated is an issue, and the caller
 * fails closed. The catalogue is not consulted here (that is `validate.ts`).
 */
import * as Issue from "@waybill/core/Issue"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as BerlinDay from "../BerlinDay.js"
import { type Base, isOperator, semantics } from "./operators.js"

/** Groups nest at most this deep; the top group is level 1. */
export const MAX_DEPTH = 5

/** At most this many conditions (leaves) in a whole filter. */
export const MAX_CONDITIONS = 50

/** A positive test on a resolved value. */
export type Test =
  | { readonly _tag: "Equal"; readonly operand: string | number }
  | { readonly _tag: "Text"; readonly base: "contains" | "begins_with" | "ends_with"; readonly operand: string }
  | { readonly _tag: "Number"; readonly base: "gt" | "gte" | "lt" | "lte"; readonly operand: number }
  | { readonly _tag: "Checked" }
  | {
      readonly _tag: "Date"
      readonly base: "on" | "before" | "after" | "on_or_before" | "on_or_after"
      readonly bounds: BerlinDay.DayBounds
    }
  | { readonly _tag: "Set" }

export interface Leaf {
  readonly _tag: "Leaf"
  /** The dotted field, split once. */
  readonly path: ReadonlyArray<string>
  readonly test: Test
  readonly negated: boolean
  /** Guarded roots this field lies under: when one has no value, the condition is false. */
  readonly guards: ReadonlyArray<ReadonlyArray<string>>
}

export interface Group {
  readonly _tag: "Group"
  readonly any: boolean
  readonly children: ReadonlyArray<Node>
}

export type Node = Leaf | Group

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** An own property of a record; inherited ones (a polluted prototype) never count. */
export const own = (record: Record<string, unknown>, key: string): unknown =>
  Object.hasOwn(record, key) ? record[key] : undefined

/** A dotted path split into segments, or none when a segment is empty. */
export const splitPath = (field: string): Option.Option<ReadonlyArray<string>> => {
  const segments = field.split(".")
  return segments.some((segment) => segment === "") ? Option.none() : Option.some(segments)
}

// Strict equality with a text or number operand (`equals`, and `is` of a select).
const equalTest = (operand: string | number): Either.Either<Test, string> => Either.right({ _tag: "Equal", operand })

const testOf = (base: Base, value: unknown): Either.Either<Test, string> => {
  switch (base) {
    case "equals":
      if (typeof value === "number") {
        return Number.isFinite(value) ? equalTest(value) : Either.left("must be a finite number or a string")
      }
      return typeof value === "string" ? equalTest(value) : Either.left("must be a string or a finite number")
    case "contains":
    case "begins_with":
    case "ends_with":
      return typeof value === "string"
        ? Either.right({ _tag: "Text", base, operand: value })
        : Either.left("must be a string")
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return typeof value === "number" && Number.isFinite(value)
        ? Either.right({ _tag: "Number", base, operand: value })
        : Either.left("must be a finite number")
    case "is":
      return typeof value === "string" ? equalTest(value) : Either.left("must be a string")
    case "on":
    case "before":
    case "after":
    case "on_or_before":
    case "on_or_after": {
      const day = typeof value === "string" ? BerlinDay.parseDate(value) : Option.none()
      if (Option.isNone(day)) return Either.left("must be a calendar date YYYY-MM-DD")
      try {
        return Either.right({ _tag: "Date", base, bounds: BerlinDay.bounds(day.value) })
      } catch {
        return Either.left("the Europe/Berlin day bounds could not be resolved")
      }
    }
    case "checked":
      return Either.right({ _tag: "Checked" })
    case "set":
      return Either.right({ _tag: "Set" })
  }
}

const guardsOf = (field: string, roots: ReadonlyArray<ReadonlyArray<string>>, rootNames: ReadonlyArray<string>) =>
  roots.filter((_, i) => field.startsWith(`${rootNames[i]}.`))

/** The plan of a stored filter, or every reason it cannot be evaluated; lenient only where evaluation is unaffected. */
export const plan = (filter: unknown, guardedRoots: ReadonlyArray<string>): Either.Either<Node, Array<Issue.Issue>> => {
  const issues: Array<Issue.Issue> = []
  const rootNames = guardedRoots.filter((root) => typeof root === "string" && Option.isSome(splitPath(root)))
  const roots = rootNames.map((root) => root.split("."))
  let leaves = 0

  const group = (input: unknown, path: string, depth: number): Node | undefined => {
    if (!isRecord(input)) {
      issues.push(Issue.make(path, "must be a group { match, conditions }"))
      return undefined
    }
    if (depth > MAX_DEPTH) {
      issues.push(Issue.make(path, `groups nest at most ${MAX_DEPTH} levels deep`))
      return undefined
    }
    const match = own(input, "match")
    if (match !== undefined && match !== "all" && match !== "any") {
      issues.push(Issue.make(Issue.joinPath(path, "match"), 'must be "all" or "any"'))
    }
    const conditions = own(input, "conditions")
    if (!Array.isArray(conditions) || conditions.length === 0) {
      issues.push(Issue.make(Issue.joinPath(path, "conditions"), "must be a non-empty array"))
      return undefined
    }
    const children: Array<Node> = []
    conditions.forEach((item: unknown, i) => {
      const itemPath = Issue.joinPath(path, "conditions", i)
      const child =
        isRecord(item) && Object.hasOwn(item, "conditions")
          ? group(item, itemPath, depth + 1)
          : condition(item, itemPath)
      if (child !== undefined) children.push(child)
    })
    return { _tag: "Group", any: match === "any", children }
  }

  const condition = (input: unknown, path: string): Node | undefined => {
    leaves++
    if (!isRecord(input)) {
      issues.push(Issue.make(path, "must be a condition { field, operator, value } or a group { match, conditions }"))
      return undefined
    }
    const field = own(input, "field")
    const segments = typeof field === "string" ? splitPath(field) : Option.none()
    if (Option.isNone(segments)) issues.push(Issue.make(Issue.joinPath(path, "field"), "must be a dotted path"))
    const operator = own(input, "operator")
    if (!isOperator(operator)) {
      issues.push(Issue.make(Issue.joinPath(path, "operator"), "is not a known operator"))
      return undefined
    }
    const meaning = semantics[operator]
    const test = testOf(meaning.base, own(input, "value"))
    if (Either.isLeft(test)) issues.push(Issue.make(Issue.joinPath(path, "value"), test.left))
    if (Option.isNone(segments) || Either.isLeft(test)) return undefined
    return {
      _tag: "Leaf",
      path: segments.value,
      test: test.right,
      negated: meaning.negated,
      guards: guardsOf(field as string, roots, rootNames)
    }
  }

  let root: Node | undefined
  try {
    root = group(filter, "", 1)
  } catch {
    // A getter or proxy in a stored filter: it cannot be evaluated.
    issues.push(Issue.make("", "could not be read"))
  }
  if (leaves > MAX_CONDITIONS) issues.push(Issue.make("", `holds ${leaves} conditions, at most ${MAX_CONDITIONS}`))
  return issues.length === 0 && root !== undefined ? Either.right(root) : Either.left(issues)
}
