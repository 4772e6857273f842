/** An iterative walk over every `country` / `countryCode` property of a JSON value. */
import { isObject } from "./json.js"

/** A path as a linked list to the root, turned into an array only when needed. */
export interface PathNode {
  readonly parent: PathNode | undefined
  readonly key: string | number
}

/** The path of a node, root first. */
export const pathOf = (node: PathNode | undefined): Array<string | number> => {
  const path: Array<string | number> = []
  for (let current = node; current !== undefined; current = current.parent) path.push(current.key)
  return path.reverse()
}

/**
 * Calls `visit` for each `country` / `countryCode` property in document order, descending into
 * its value only if `visit` returns `true`. Linear, so deep nesting cannot overflow the stack.
 */
export const forEachCountry = (root: unknown, visit: (value: unknown, node: PathNode) => boolean): void => {
  const stack: Array<readonly [value: unknown, node: PathNode | undefined]> = [[root, undefined]]
  while (stack.length > 0) {
    const [value, node] = stack.pop()!
    const children: Array<readonly [unknown, PathNode]> = []
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        children.push([item, { parent: node, key: index }])
      })
    } else if (isObject(value)) {
      for (const key of Object.keys(value)) {
        const child = value[key]
        const childNode: PathNode = { parent: node, key }
        if ((key === "country" || key === "countryCode") && !visit(child, childNode)) continue
        children.push([child, childNode])
      }
    }
    // Pushed in reverse so values are visited in document order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
  }
}
