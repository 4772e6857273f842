/**
 * The order test files start in. Vitest starts the files that took longest in the previous run
 * first, from its cache; a clean clone (CI) has no cache, and Vitest then starts the largest
 * files first, which put the 4-minute data-directory test near the end of a run with every
 * other file already done (measured on a 2-core machine: it started at 757 s of a 1,036 s run).
 * Without a cache, the files below (the ones that start servers, databases or npm over and over,
 * longest first) start before all others; the others keep Vitest's order. With a cache, Vitest's
 * own order (failed first, then longest) stands.
 */
import { relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/** Paths from the repository's root, longest first as measured (docs/decisions/0041-test-files-three-at-a-time-longest-first.md). */
export const longestFiles: ReadonlyArray<string> = [
  "test/docs.test.ts",
  "test/data-dir-lock.test.ts",
  "test/package.test.ts",
  "packages/server/test/keys.test.ts",
  "test/startup.test.ts",
  "packages/store-pg/test/Schema.test.ts",
  "test/dispatcher-processes.test.ts",
  "test/tracing.test.ts",
  "test/tours.test.ts",
  "test/console.test.ts",
  "test/outage.test.ts"
]

/** Vitest's sequencer, with `longestFiles` first when there is no cache to go by. */
export class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    const root = this.ctx.config.root
    const cached = sorted.some(
      (file) => this.ctx.cache.getFileTestResults(`${file.project.name}:${relative(root, file.moduleId)}`) !== undefined
    )
    if (cached) return sorted
    const rank = (file: TestSpecification) => {
      const index = longestFiles.indexOf(relative(root, file.moduleId))
      return index === -1 ? longestFiles.length : index
    }
    // A stable sort: the files not listed keep Vitest's order after the listed ones.
    return sorted.sort((a, b) => rank(a) - rank(b))
  }
}
