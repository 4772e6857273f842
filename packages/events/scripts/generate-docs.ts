/**
 * Writes docs/events.md from the catalogue (`Docs.render`). Run after changing the catalogue:
 * `npx tsx packages/events/scripts/generate-docs.ts`; a test fails while the file is stale.
 */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Docs from "../src/Docs.js"

const target = fileURLToPath(new URL("../../../docs/events.md", import.meta.url))
writeFileSync(target, Docs.render())
console.log(`Wrote ${target}`)
