/**
 * Writes the console's page script and style sheet into `dist/assets`, so that the built
 * package serves them without esbuild or its sources (`npm run build` runs this after tsc). A file
 * whose content is already there is left as it is: a build during a test run never rewrites a
 * file that a running server may be reading.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises"
import * as Bundle from "../src/internal/bundle.js"

const assets = new URL("../dist/assets/", import.meta.url)
const bundle = await Bundle.make()
await mkdir(assets, { recursive: true })
const writeChanged = async (name: string, content: string) => {
  const file = new URL(name, assets)
  if ((await readFile(file, "utf8").catch(() => undefined)) !== content) await writeFile(file, content)
}
await writeChanged(Bundle.files.script, bundle.script)
await writeChanged(Bundle.files.style, bundle.style)
console.log(`console assets: ${bundle.script.length} + ${bundle.style.length} bytes in packages/console/dist/assets`)
