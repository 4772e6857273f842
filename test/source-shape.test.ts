/**
 * The packages' sources keep the house shape: comments at most 22 % of their non-blank lines,
 * no file over 600 lines (`scripts/source-shape.ts`).
 */
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { commentShare, countLines, limits, measure } from "../scripts/source-shape.js"

const root = fileURLToPath(new URL("..", import.meta.url))

describe("source shape", () => {
  it("counts line comments and every line of a block comment, not code or blank lines", () => {
    const text = "/**\n * A doc.\n */\nexport const a = 1 // trailing\n\n// why\nconst b = /* inline */ 2\n"
    assert.deepStrictEqual(countLines(text), { lines: 7, nonBlank: 6, comments: 4 })
  })

  it("keeps comments at most 22 % of the packages' non-blank source lines", () => {
    const share = commentShare(measure(root))
    assert.isAtMost(share, limits.commentShare, `comments are ${(100 * share).toFixed(1)} % of source lines`)
  })

  it("keeps every source file at most 600 lines", () => {
    const long = measure(root).filter((file) => file.lines > limits.fileLines)
    assert.deepStrictEqual(
      long.map((file) => `${file.path} (${file.lines})`),
      []
    )
  })
})
