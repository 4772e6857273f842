/**
 * Writes the console's page script and style sheet into `dist/assets`, so that the built
 * package serves them without esbuild or its sources (`npm run build` runs this after tsc).
 */
import { mkdir, writeFile } from "node:fs/promises"
import * as Bundle from "../src/internal/bundle.js"

const assets = new URL("../dist/assets/", import.meta.url)
const bundle = await Bundle.make()
await mkdir(assets, { recursive: true })
await writeFile(new URL(Bundle.files.script, assets), bundle.script)
await writeFile(new URL(Bundle.files.style, assets), bundle.style)
console.log(`console assets: ${bundle.script.length} + ${bundle.style.length} bytes in packages/console/dist/assets`)
