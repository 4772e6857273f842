/**
 * Writes docs/openapi.json: the OpenAPI 3.1 document exactly as the reference server serves it
 * at `GET /openapi.json` (`OpenApi.fromApi(WaybillApi)`, including the `webhooks` section the
 * API's `OpenApi.Transform` annotation adds from the event catalogue).
 *
 *   npx tsx scripts/generate-openapi.ts            write docs/openapi.json
 *   npx tsx scripts/generate-openapi.ts --check    exit 1 if docs/openapi.json is stale
 *   npx tsx scripts/generate-openapi.ts --out F    write to F instead
 */
import { readFileSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as OpenApi from "@effect/platform/OpenApi"
import { WaybillApi } from "@waybill/http/Api"

const args = process.argv.slice(2)
const outAt = args.indexOf("--out")
const target =
  outAt >= 0 && args[outAt + 1] !== undefined
    ? resolve(args[outAt + 1]!)
    : fileURLToPath(new URL("../docs/openapi.json", import.meta.url))
const text = `${JSON.stringify(OpenApi.fromApi(WaybillApi), null, 2)}\n`

if (args.includes("--check")) {
  let current = ""
  try {
    current = readFileSync(target, "utf8")
  } catch {
    // A missing file is stale too.
  }
  if (current !== text) {
    console.error(`${target} is stale: run npm run docs:openapi (npx tsx scripts/generate-openapi.ts)`)
    process.exit(1)
  }
  console.log(`${target} is up to date`)
} else {
  writeFileSync(target, text)
  console.log(`Wrote ${target}`)
}
