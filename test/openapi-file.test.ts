/**
 * docs/openapi.json is committed for readers and client generators; it must be exactly what the
 * server serves. Regenerate with `npm run docs:openapi` (scripts/generate-openapi.ts).
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import * as OpenApi from "@effect/platform/OpenApi"
import { assert, describe, it } from "@effect/vitest"
import { WaybillApi } from "@waybill/http/Api"
import { Effect } from "effect"
import { baseUrl, call, forEachServer } from "./harness.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const committedPath = join(root, "docs/openapi.json")
const committed = readFileSync(committedPath, "utf8")
const stale = "docs/openapi.json is stale: run npm run docs:openapi (npx tsx scripts/generate-openapi.ts)"

// Run without blocking the worker: each run loads the API and tsx (seconds on a busy machine).
const script = (...args: Array<string>) =>
  promisify(execFile)(
    process.execPath,
    ["--conditions=@waybill/source", "--import", "tsx", join(root, "scripts/generate-openapi.ts"), ...args],
    { cwd: root, encoding: "utf8" }
  )

describe("docs/openapi.json", () => {
  it("is the document of WaybillApi, formatted as the script writes it", () => {
    assert.strictEqual(committed, `${JSON.stringify(OpenApi.fromApi(WaybillApi), null, 2)}\n`, stale)
  })

  it("is what scripts/generate-openapi.ts writes, and its --check tells stale from fresh", async () => {
    const dir = await mkdtemp(join(tmpdir(), "waybill-openapi-"))
    try {
      const out = join(dir, "openapi.json")
      await script("--out", out)
      assert.strictEqual(await readFile(out, "utf8"), committed, stale)
      await script("--check")
      const failed = await script("--check", "--out", join(dir, "missing.json")).then(
        () => false,
        () => true
      )
      assert.isTrue(failed, "--check must fail for a missing or different file")
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

forEachServer("docs/openapi.json against the server", (it) => {
  it.effect("equals GET /openapi.json of the running server (mounted under a path, with that path as its server)", () =>
    Effect.gen(function* () {
      const reply = yield* call("/openapi.json")
      assert.strictEqual(reply.status, 200)
      const mountPath = new URL(yield* baseUrl).pathname
      const expected = JSON.parse(committed)
      assert.deepStrictEqual(
        reply.body,
        mountPath === "/" ? expected : { ...expected, servers: [{ url: mountPath }] },
        stale
      )
    })
  )
})
