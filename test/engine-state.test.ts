/**
 * The delivery engine's state (declared in `packages/webhooks/src/internal/engineState.ts`) has
 * one writer, `internal/engine.ts`: the other modules of `@waybill/webhooks` call its transitions
 * and read the state, never write it. With TypeScript's checker, every assignment, `++`/`--`,
 * `delete` and mutating call (on a set, map, array, lane or signal) whose target is a property
 * declared in either file is found; one outside `engine.ts` fails the test. A planted module with one write of each kind shows the
 * check finds them all.
 */
import { readdirSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import ts from "typescript"

const root = fileURLToPath(new URL("..", import.meta.url))
const sources = join(root, "packages", "webhooks", "src")
const engine = join(sources, "internal", "engine.ts")
const declaring = new Set([engine, join(sources, "internal", "engineState.ts")])

// Methods that change the collection, lane or signal they are called on.
const mutators = new Set([
  "add",
  "clear",
  "delete",
  "set",
  "push",
  "pop",
  "shift",
  "unshift",
  "splice",
  "sort",
  "reverse",
  "fill",
  "copyWithin",
  "notify",
  "take",
  "release",
  "drain"
])

const assignments = new Set([
  ts.SyntaxKind.EqualsToken,
  ts.SyntaxKind.PlusEqualsToken,
  ts.SyntaxKind.MinusEqualsToken,
  ts.SyntaxKind.AsteriskEqualsToken,
  ts.SyntaxKind.SlashEqualsToken,
  ts.SyntaxKind.PercentEqualsToken,
  ts.SyntaxKind.BarBarEqualsToken,
  ts.SyntaxKind.AmpersandAmpersandEqualsToken,
  ts.SyntaxKind.QuestionQuestionEqualsToken,
  ts.SyntaxKind.LessThanLessThanEqualsToken,
  ts.SyntaxKind.GreaterThanGreaterThanEqualsToken,
  ts.SyntaxKind.BarEqualsToken,
  ts.SyntaxKind.AmpersandEqualsToken
])

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

const options: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  customConditions: ["@waybill/source"]
}

/** A program of the package's sources, with `planted` modules (path → text) beside them. */
const programOf = (planted: Record<string, string> = {}): ts.Program => {
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  const fileExists = host.fileExists.bind(host)
  const readFile = host.readFile.bind(host)
  host.getSourceFile = (fileName, language, onError) =>
    fileName in planted
      ? ts.createSourceFile(fileName, planted[fileName]!, language)
      : getSourceFile(fileName, language, onError)
  host.fileExists = (fileName) => fileName in planted || fileExists(fileName)
  host.readFile = (fileName) => planted[fileName] ?? readFile(fileName)
  return ts.createProgram([...sourceFiles(sources), ...Object.keys(planted)], options, host)
}

/** Each write of the engine's state outside `engine.ts`, as `file:line: text`. */
const writesOutsideEngine = (program: ts.Program): Array<string> => {
  const checker = program.getTypeChecker()
  const declaredInEngine = (symbol: ts.Symbol | undefined) =>
    symbol?.declarations?.some((declaration) => declaring.has(declaration.getSourceFile().fileName)) ?? false
  const unwrap = (node: ts.Expression): ts.Expression =>
    ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node) || ts.isAsExpression(node)
      ? unwrap(node.expression)
      : node
  // Whether `node` is the engine's state: one of its properties, an element of one, or a local alias of one.
  const isState = (target: ts.Expression, seen = new Set<ts.Node>()): boolean => {
    const node = unwrap(target)
    if (seen.has(node)) return false
    seen.add(node)
    if (ts.isPropertyAccessExpression(node)) return declaredInEngine(checker.getSymbolAtLocation(node.name))
    if (ts.isElementAccessExpression(node)) return isState(node.expression, seen)
    if (ts.isIdentifier(node)) {
      const declaration = checker.getSymbolAtLocation(node)?.valueDeclaration
      return (
        declaration !== undefined &&
        ts.isVariableDeclaration(declaration) &&
        declaration.initializer !== undefined &&
        isState(declaration.initializer, seen)
      )
    }
    return false
  }
  const found: Array<string> = []
  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile || file.fileName === engine || !file.fileName.startsWith(sources)) continue
    const report = (node: ts.Node) => {
      const { line } = file.getLineAndCharacterOfPosition(node.getStart(file))
      found.push(`${relative(root, file.fileName)}:${line + 1}: ${node.getText(file)}`)
    }
    const visit = (node: ts.Node): void => {
      if (ts.isBinaryExpression(node) && assignments.has(node.operatorToken.kind) && isState(node.left)) report(node)
      else if (
        (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
        (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken) &&
        isState(node.operand)
      )
        report(node)
      else if (ts.isDeleteExpression(node) && isState(node.expression)) report(node)
      else if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        mutators.has(node.expression.name.text) &&
        isState(node.expression.expression)
      )
        report(node)
      ts.forEachChild(node, visit)
    }
    visit(file)
  }
  return found
}

describe("the delivery engine's state", () => {
  it("is written in engine.ts alone", () => {
    assert.deepStrictEqual(writesOutsideEngine(programOf()), [])
  })

  it("the check finds each kind of write planted in another module", () => {
    const intruder = join(sources, "internal", "intruder.ts")
    const found = writesOutsideEngine(
      programOf({
        [intruder]: [
          `import type { Loop } from "./engineState.js"`,
          `export const intrude = (loop: Loop) => {`,
          `  loop.fullClaim = true`,
          `  loop.unwritten++`,
          `  loop.mayHaveMore.add("wh")`,
          `  loop.fan!.ready.notify()`,
          `  loop.lanes.take()`,
          `  const live = loop.claims.live`,
          `  live.delete(live.values().next().value!)`,
          `  loop.results[0] = loop.results[1]!`,
          `  const storing = loop.fan?.storing.get("wh")`,
          `  if (storing !== undefined) storing.ended += 1`,
          `  const tally = loop.tally`,
          `  tally.attempts--`,
          `  return loop.lanes.held() + loop.claims.live.size`,
          `}`,
          ``
        ].join("\n")
      })
    )
    assert.deepStrictEqual(
      found.map((line) => Number(line.split(":")[1])),
      [3, 4, 5, 6, 7, 9, 10, 12, 14]
    )
  })
})
