/**
 * Every package's `exports` list its public modules and nothing else: `.`, and one entry per
 * module at the top of `src/` (the reference server's commands `main` and `keys` aside), each
 * with the `@waybill/source` condition the workspace resolves to sources and the build's
 * declarations and JavaScript. No wildcard, so nothing else is importable.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"

const root = fileURLToPath(new URL("..", import.meta.url))
const packages = readdirSync(join(root, "packages"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
const commands: Record<string, ReadonlyArray<string>> = { server: ["main", "keys"] }

describe("package exports", () => {
  for (const name of packages) {
    it(`@waybill/${name} exports its public modules only`, () => {
      const manifest = JSON.parse(readFileSync(join(root, "packages", name, "package.json"), "utf8")) as {
        exports: Record<string, unknown>
      }
      const modules = readdirSync(join(root, "packages", name, "src"))
        .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts") && file !== "index.ts")
        .map((file) => file.slice(0, -3))
        .filter((module) => !(commands[name] ?? []).includes(module))
        .sort()
      assert.deepStrictEqual(Object.keys(manifest.exports), [".", ...modules.map((module) => `./${module}`)])
      for (const module of modules) {
        assert.deepStrictEqual(manifest.exports[`./${module}`], {
          "@waybill/source": `./src/${module}.ts`,
          types: `./dist/${module}.d.ts`,
          default: `./dist/${module}.js`
        })
      }
    })
  }
})
