/**
 * Runs every benchmark (`bench/*.bench.ts`, and a package's own of its internal modules in
 * `packages/<name>/bench/`) one after another, each in its own process so
 * that one benchmark's garbage and JIT state do not skew the next.
 *
 * Usage: `npm run bench` for all, `npm run bench -- filters signing` for some.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const packages = join(here, "..", "packages")
const wanted = process.argv.slice(2)
const benchesIn = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((file) => file.endsWith(".bench.ts"))
        .map((file) => join(dir, file))
    : []
const files = [here, ...readdirSync(packages).map((name) => join(packages, name, "bench"))]
  .flatMap(benchesIn)
  .filter((file) => wanted.length === 0 || wanted.some((name) => basename(file).startsWith(name)))
  .sort((a, b) => basename(a).localeCompare(basename(b)))

if (files.length === 0) {
  console.error(`No benchmark matches ${wanted.join(", ")}`)
  process.exit(1)
}

let failed = 0
for (const file of files) {
  console.log(`\n=== ${basename(file)}`)
  const result = spawnSync(process.execPath, ["--conditions=@waybill/source", "--import", "tsx", file], {
    stdio: "inherit"
  })
  if (result.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
