/**
 * The closure engine, where `new Function` is forbidden: the semantics of `codegen.ts`, no allocation
 * per evaluation.
 */
import * as BerlinDay from "../BerlinDay.js"
import type { Leaf, Node, Test } from "./plan.js"

type Predicate = (payload: unknown) => boolean
type Read = (payload: unknown) => unknown

/** An own property of a plain object (never of an array); `undefined` otherwise. */
const read = (node: unknown, key: string): unknown =>
  typeof node === "object" && node !== null && !Array.isArray(node) && Object.hasOwn(node, key)
    ? (node as Record<string, unknown>)[key]
    : undefined

const reader = (path: ReadonlyArray<string>): Read => {
  if (path.length === 1) {
    const key = path[0]!
    return (payload) => read(payload, key)
  }
  return (payload) => {
    let value = payload
    for (let i = 0; i < path.length && value !== undefined; i++) value = read(value, path[i]!)
    return value
  }
}

const tester = (test: Test): ((value: unknown) => boolean) => {
  switch (test._tag) {
    case "Equal": {
      const operand = test.operand
      return (value) => value === operand
    }
    case "Text": {
      const operand = test.operand
      switch (test.base) {
        case "contains":
          return (value) => typeof value === "string" && value.includes(operand)
        case "begins_with":
          return (value) => typeof value === "string" && value.startsWith(operand)
        case "ends_with":
          return (value) => typeof value === "string" && value.endsWith(operand)
      }
      break
    }
    case "Number": {
      const operand = test.operand
      switch (test.base) {
        case "gt":
          return (value) => typeof value === "number" && value > operand && value !== Number.POSITIVE_INFINITY
        case "gte":
          return (value) => typeof value === "number" && value >= operand && value !== Number.POSITIVE_INFINITY
        case "lt":
          return (value) => typeof value === "number" && value < operand && value !== Number.NEGATIVE_INFINITY
        case "lte":
          return (value) => typeof value === "number" && value <= operand && value !== Number.NEGATIVE_INFINITY
      }
      break
    }
    case "Checked":
      return (value) => value === true
    case "Date": {
      const bounds = test.bounds
      switch (test.base) {
        case "on":
          return (value) => BerlinDay.compare(value, bounds) === 0
        case "before":
          return (value) => BerlinDay.compare(value, bounds) < 0
        case "after":
          return (value) => BerlinDay.compare(value, bounds) > 0
        case "on_or_before":
          return (value) => BerlinDay.compare(value, bounds) <= 0
        case "on_or_after":
          return (value) => BerlinDay.compare(value, bounds) >= 0
      }
      break
    }
    case "Set":
      return (value) => value !== undefined && value !== null
  }
}

const leaf = (node: Leaf): Predicate => {
  const get = reader(node.path)
  const test = tester(node.test)
  let predicate: Predicate = node.negated ? (payload) => !test(get(payload)) : (payload) => test(get(payload))
  for (const guard of node.guards) {
    const root = reader(guard)
    const inner = predicate
    predicate = (payload) => {
      const value = root(payload)
      return value !== undefined && value !== null && inner(payload)
    }
  }
  return predicate
}

const build = (node: Node): Predicate => {
  if (node._tag === "Leaf") return leaf(node)
  const children = node.children.map(build)
  if (children.length === 1) return children[0]!
  return node.any
    ? (payload) => {
        for (let i = 0; i < children.length; i++) if (children[i]!(payload)) return true
        return false
      }
    : (payload) => {
        for (let i = 0; i < children.length; i++) if (!children[i]!(payload)) return false
        return true
      }
}

/** The plan as closures; a throwing payload (getter, proxy) fails closed. */
export const interpret = (root: Node): Predicate => {
  const predicate = build(root)
  return (payload) => {
    try {
      return predicate(payload)
    } catch {
      return false
    }
  }
}
