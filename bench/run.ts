/**
 * Runs every benchmark (`bench/*.bench.ts`) one after another, each in its own process so
 * that one benchmark's garbage and JIT state do not skew the next.
 *
 * Usage: `npm run bench` for all, `npm run bench -- filters signing` for some.
 */
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const wanted = process.argv.slice(2)
const files = readdirSync(here)
  .filter((file) => file.endsWith(".bench.ts"))
  .filter((file) => wanted.length === 0 || wanted.some((name) => file.startsWith(name)))
  .sort()

if (files.length === 0) {
  console.error(`No benchmark matches ${wanted.join(", ")}`)
  process.exit(1)
}

let failed = 0
for (const file of files) {
  console.log(`\n=== ${file}`)
  const result = spawnSync(process.execPath, ["--conditions=@waybill/source", "--import", "tsx", join(here, file)], {
    stdio: "inherit"
  })
  if (result.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
