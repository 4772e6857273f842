/**
 * The code-generating engine: a plan becomes one straight-line function, with the semantics of
 * `interpret.ts`; why it is safe: docs/internals.md (Filter code generation).
 */
import * as BerlinDay from "../BerlinDay.js"
import type { Leaf, Node, Test } from "./plan.js"

type Predicate = (payload: unknown) => boolean

const literal = (text: string): string => JSON.stringify(text)

const number = (value: number): string => {
  // Only finite numbers reach here (plan.ts); the check keeps the source safe regardless.
  if (!Number.isFinite(value)) throw new Error("not a finite number")
  return `(${String(value)})`
}

/** The expression reading own property `key` of the object in variable `object` ("no value": undefined). */
const read = (object: string, key: string): string => {
  const k = literal(key)
  return (
    `(${object} !== null && typeof ${object} === "object" && !A(${object}) ? ` +
    `((v = ${object}[${k}]) === undefined || (OP[${k}] === undefined && G(${object}) === OP) || h(${object}, ${k}) ? v : undefined)` +
    ` : undefined)`
  )
}

const testSource = (test: Test, constants: Array<unknown>): string => {
  switch (test._tag) {
    case "Equal":
      return `v === ${typeof test.operand === "number" ? number(test.operand) : literal(test.operand)}`
    case "Text": {
      const operand = literal(test.operand)
      switch (test.base) {
        case "contains":
          return `typeof v === "string" && v.includes(${operand})`
        case "begins_with":
          return `typeof v === "string" && v.startsWith(${operand})`
        case "ends_with":
          return `typeof v === "string" && v.endsWith(${operand})`
      }
      break
    }
    case "Number": {
      const operand = number(test.operand)
      switch (test.base) {
        case "gt":
          return `typeof v === "number" && v > ${operand} && v !== Infinity`
        case "gte":
          return `typeof v === "number" && v >= ${operand} && v !== Infinity`
        case "lt":
          return `typeof v === "number" && v < ${operand} && v !== -Infinity`
        case "lte":
          return `typeof v === "number" && v <= ${operand} && v !== -Infinity`
      }
      break
    }
    case "Checked":
      return "v === true"
    case "Date": {
      const index = constants.push(test.bounds) - 1
      const comparison = `D(v, K[${index}])`
      switch (test.base) {
        case "on":
          return `${comparison} === 0`
        case "before":
          return `${comparison} < 0`
        case "after":
          return `${comparison} > 0`
        case "on_or_before":
          return `${comparison} <= 0`
        case "on_or_after":
          return `${comparison} >= 0`
      }
      break
    }
    case "Set":
      return "v !== undefined && v !== null"
  }
}

/** The generated function body and the values it receives. Exported for tests. */
export const generate = (root: Node): { readonly source: string; readonly constants: ReadonlyArray<unknown> } => {
  const constants: Array<unknown> = []
  // Every object a field is read from gets a variable, resolved once per evaluation, parents first.
  const variables = new Map<string, string>([["[]", "p"]])
  const declarations: Array<string> = []
  const variable = (segments: ReadonlyArray<string>): string => {
    const id = JSON.stringify(segments)
    const known = variables.get(id)
    if (known !== undefined) return known
    const parent = variable(segments.slice(0, -1))
    const name = `n${variables.size}`
    variables.set(id, name)
    declarations.push(`${name} = ${read(parent, segments[segments.length - 1]!)}`)
    return name
  }

  const leaf = (node: Leaf): string => {
    const parent = variable(node.path.slice(0, -1))
    const key = literal(node.path[node.path.length - 1]!)
    // Every positive test is false on undefined, so the raw value is tested first and its
    // origin (own, not an array's) is checked only when the test passes.
    const value =
      `(v = (${parent} !== null && typeof ${parent} === "object" ? ${parent}[${key}] : undefined), ` +
      `${testSource(node.test, constants)} && !A(${parent}) && ((OP[${key}] === undefined && G(${parent}) === OP) || h(${parent}, ${key})))`
    let expression = node.negated ? `!${value}` : value
    for (const guard of node.guards) {
      const root = variable(guard)
      expression = `(${root} !== undefined && ${root} !== null && ${expression})`
    }
    return expression
  }

  const expression = (node: Node): string =>
    node._tag === "Leaf" ? leaf(node) : `(${node.children.map(expression).join(node.any ? " || " : " && ")})`

  const body = expression(root)
  const source = [
    '"use strict";',
    "return function waybillFilter(p) {",
    "  try {",
    `    var v${declarations.map((declaration) => `,\n      ${declaration}`).join("")};`,
    `    return ${body};`,
    "  } catch (e) {",
    "    return false;",
    "  }",
    "};"
  ].join("\n")
  return { source, constants }
}

/** Compiles a plan to a generated function; throws where `new Function` is unavailable. */
export const codegen = (root: Node): Predicate => {
  const { constants, source } = generate(root)
  const factory = new Function("h", "A", "G", "OP", "D", "K", source) as (...args: ReadonlyArray<unknown>) => Predicate
  return factory(Object.hasOwn, Array.isArray, Object.getPrototypeOf, Object.prototype, BerlinDay.compare, constants)
}

let available: boolean | undefined

/** Whether this runtime allows `new Function` (CSP and some edge runtimes do not). */
export const isAvailable = (): boolean => {
  if (available === undefined) {
    try {
      available = new Function("return true")() === true
    } catch {
      available = false
    }
  }
  return available
}
