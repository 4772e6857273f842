/**
 * The shape of the packages' sources: the share of their non-blank lines that are comments,
 * and each file's length. `npm run source-shape` prints both; `test/source-shape.test.ts` holds
 * them to the house limits.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

/** The house limits: comments at most 22 % of non-blank source lines, files at most 600 lines. */
export const limits = { commentShare: 0.22, fileLines: 600 } as const

/** One file's counts: its lines, its non-blank lines and how many of those are comments. */
export interface FileShape {
  readonly path: string
  readonly lines: number
  readonly nonBlank: number
  readonly comments: number
}

/** Counts the comment lines of TypeScript text: `//` lines and every line of a block comment. */
export const countLines = (text: string): Omit<FileShape, "path"> => {
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n")
  let nonBlank = 0
  let comments = 0
  let inBlock = false
  for (const raw of lines) {
    const line = raw.trim()
    if (line === "") continue
    nonBlank++
    if (inBlock) {
      comments++
      if (line.includes("*/")) inBlock = false
    } else if (line.startsWith("//")) {
      comments++
    } else if (line.startsWith("/*")) {
      comments++
      inBlock = !line.includes("*/")
    }
  }
  return { lines: lines.length, nonBlank, comments }
}

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : []
  })

/** Every source file of `packages/<name>/src`, counted. */
export const measure = (root: string): ReadonlyArray<FileShape> =>
  readdirSync(join(root, "packages"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const src = join(root, "packages", entry.name, "src")
      try {
        return sourceFiles(src)
      } catch {
        return []
      }
    })
    .map((path) => ({ path: relative(root, path), ...countLines(readFileSync(path, "utf8")) }))

/** The comment share of a set of files. */
export const commentShare = (files: ReadonlyArray<FileShape>): number => {
  const nonBlank = files.reduce((sum, file) => sum + file.nonBlank, 0)
  return nonBlank === 0 ? 0 : files.reduce((sum, file) => sum + file.comments, 0) / nonBlank
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = measure(fileURLToPath(new URL("..", import.meta.url)))
  const byPackage = new Map<string, Array<FileShape>>()
  for (const file of files) {
    const name = file.path.split("/")[1] ?? ""
    byPackage.set(name, [...(byPackage.get(name) ?? []), file])
  }
  const percent = (share: number) => `${(100 * share).toFixed(1)} %`
  for (const [name, shapes] of byPackage) console.log(`${name.padEnd(10)} ${percent(commentShare(shapes))}`)
  console.log(`${"all".padEnd(10)} ${percent(commentShare(files))} (limit ${percent(limits.commentShare)})`)
  const long = files.filter((file) => file.lines > limits.fileLines)
  for (const file of long) console.log(`over ${limits.fileLines} lines: ${file.path} (${file.lines})`)
}
