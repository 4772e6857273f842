/**
 * The filter builder's model: the tree a form edits (every node with a stable key, every value
 * as the text its control holds) and its conversions from and to the API's `FilterGroup`
 * (contract §6). Pure functions, tested without a browser.
 */
import type { FilterField } from "@waybill/filters/FilterField"

/** Groups nest at most this deep (the top group is level 1), contract §6. */
export const maxDepth = 5
/** At most this many conditions (leaves) in one filter, contract §6. */
export const maxConditions = 50

export interface ConditionNode {
  readonly kind: "condition"
  readonly key: number
  readonly field: string
  readonly operator: string
  /** What the value control holds: text, a number as typed, an option id, `YYYY-MM-DD`. */
  readonly value: string
}

export interface GroupNode {
  readonly kind: "group"
  readonly key: number
  readonly match: "all" | "any"
  readonly children: ReadonlyArray<FilterNode>
}

export type FilterNode = ConditionNode | GroupNode

let nextKey = 1
const key = () => nextKey++

/** Operators that look at presence only: they take no value (contract §6). */
const presenceOperators: ReadonlySet<string> = new Set(["is_set", "is_not_set"])

/** Whether a condition with this field type and operator takes a value. */
export const takesValue = (type: FilterField["type"] | undefined, operator: string): boolean =>
  type !== "checkbox" && !presenceOperators.has(operator)

export const emptyCondition = (): ConditionNode => ({
  kind: "condition",
  key: key(),
  field: "",
  operator: "",
  value: ""
})

export const emptyGroup = (): GroupNode => ({ kind: "group", key: key(), match: "all", children: [emptyCondition()] })

/** A condition set to a field: its first operator, and for a select its first option. */
export const withField = (condition: ConditionNode, field: FilterField | undefined): ConditionNode => ({
  ...condition,
  field: field?.path ?? "",
  operator: field?.operators[0] ?? "",
  value: field?.type === "select" ? (field.options?.[0]?.id ?? "") : ""
})

/** How many conditions (leaves) a tree holds. */
export const conditionCount = (node: FilterNode): number =>
  node.kind === "condition" ? 1 : node.children.reduce((sum, child) => sum + conditionCount(child), 0)

/** Replaces the node with `target`'s key, wherever it is. */
export const replace = (node: FilterNode, target: number, next: FilterNode | null): FilterNode | null => {
  if (node.key === target) return next
  if (node.kind === "condition") return node
  const children = node.children.flatMap((child) => {
    const replaced = replace(child, target, next)
    return replaced === null ? [] : [replaced]
  })
  return { ...node, children }
}

/** Adds a child to the group with `target`'s key. */
export const append = (node: FilterNode, target: number, child: FilterNode): FilterNode =>
  node.kind === "condition"
    ? node
    : node.key === target
      ? { ...node, children: [...node.children, child] }
      : { ...node, children: node.children.map((inner) => append(inner, target, child)) }

// The operand the API expects for what a control holds; a number that does not parse is sent as
// typed, so the API's issue names it at its path.
const operand = (type: FilterField["type"] | undefined, value: string): unknown => {
  if (type !== "number") return value
  const parsed = Number(value)
  return value.trim() !== "" && Number.isFinite(parsed) ? parsed : value
}

/** The API's `FilterGroup` for an edited tree; `fields` gives each field's type. */
export const toFilter = (group: GroupNode, fields: ReadonlyArray<FilterField>): unknown => {
  const typeOf = (path: string) => fields.find((field) => field.path === path)?.type
  const convert = (node: FilterNode): unknown => {
    if (node.kind === "group") return { match: node.match, conditions: node.children.map(convert) }
    const type = typeOf(node.field)
    return takesValue(type, node.operator)
      ? { field: node.field, operator: node.operator, value: operand(type, node.value) }
      : { field: node.field, operator: node.operator }
  }
  return convert(group)
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The editable tree of a stored filter (as `GET /webhooks/{id}` answers it). */
export const fromFilter = (filter: unknown): GroupNode => {
  const convert = (node: unknown): FilterNode => {
    if (isRecord(node) && Array.isArray(node.conditions)) {
      return {
        kind: "group",
        key: key(),
        match: node.match === "any" ? "any" : "all",
        children: node.conditions.map(convert)
      }
    }
    const condition = isRecord(node) ? node : {}
    return {
      kind: "condition",
      key: key(),
      field: typeof condition.field === "string" ? condition.field : "",
      operator: typeof condition.operator === "string" ? condition.operator : "",
      value: condition.value === undefined || condition.value === null ? "" : String(condition.value)
    }
  }
  const root = convert(filter)
  return root.kind === "group" ? root : { kind: "group", key: key(), match: "all", children: [root] }
}

/** An element id for the control of a body path (`filters.tour-created.conditions.0.value`). */
export const controlId = (path: string): string => `control-${path.replace(/[^A-Za-z0-9_-]/g, "_")}`
