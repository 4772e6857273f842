/**
 * The run's file order (`test/sequencer.ts`): without Vitest's cache the longest files start
 * first, in the order listed; with it, Vitest's own order stands. Every listed file exists, so a
 * rename cannot silently drop one to the end of a run.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import type { TestSpecification, Vitest } from "vitest/node"
import { LongestFirst, longestFiles } from "./sequencer.js"

const root = fileURLToPath(new URL("..", import.meta.url))

const spec = (path: string) =>
  ({ project: { name: "e2e" }, moduleId: join(root, path) }) as unknown as TestSpecification

const sequencer = (cachedDurations: Record<string, number> | undefined) =>
  new LongestFirst({
    config: { root },
    cache: {
      getFileTestResults: (key: string) => {
        const duration = cachedDurations?.[key.slice("e2e:".length)]
        return duration === undefined ? undefined : { failed: false, duration }
      },
      // Vitest's order without a cache: larger files first.
      getFileStats: (key: string) => ({ size: key.length })
    }
  } as unknown as Vitest)

describe("the order of a run's files", () => {
  it("lists only files that exist", () => {
    for (const path of longestFiles) assert.isTrue(existsSync(join(root, path)), path)
  })

  it("without a cache: the listed files first, in their order, then the others in Vitest's", async () => {
    const files = ["test/a-short.test.ts", longestFiles[2]!, "test/a-much-longer-name.test.ts", longestFiles[0]!]
    const sorted = await sequencer(undefined).sort(files.map(spec))
    assert.deepStrictEqual(
      sorted.map((file) => file.moduleId.slice(root.length)),
      [longestFiles[0], longestFiles[2], "test/a-much-longer-name.test.ts", "test/a-short.test.ts"]
    )
  })

  it("with a cache: the longest of the last run first, whatever the list says", async () => {
    const durations = { [longestFiles[0]!]: 10, "test/slow-last-time.test.ts": 500 }
    const sorted = await sequencer(durations).sort([spec(longestFiles[0]!), spec("test/slow-last-time.test.ts")])
    assert.deepStrictEqual(
      sorted.map((file) => file.moduleId.slice(root.length)),
      ["test/slow-last-time.test.ts", longestFiles[0]]
    )
  })
})
