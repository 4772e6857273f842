// Writes each package's `exports` from its modules: `.` and one entry per module at the top of
// `src/` (the server's commands aside), as test/exports.test.ts requires. Run after adding,
// renaming or removing a public module: `npm run exports`.
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const commands = { server: ["main", "keys"] }
const entry = (module) => ({
  "@waybill/source": `./src/${module}.ts`,
  types: `./dist/${module}.d.ts`,
  default: `./dist/${module}.js`
})
for (const name of readdirSync(join(root, "packages"))) {
  const file = join(root, "packages", name, "package.json")
  const manifest = JSON.parse(readFileSync(file, "utf8"))
  const modules = readdirSync(join(root, "packages", name, "src"))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && f !== "index.ts")
    .map((f) => f.slice(0, -3))
    .filter((module) => !(commands[name] ?? []).includes(module))
    .sort()
  manifest.exports = { ".": entry("index"), ...Object.fromEntries(modules.map((m) => [`./${m}`, entry(m)])) }
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`)
}
