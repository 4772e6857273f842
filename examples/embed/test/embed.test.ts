/**
 * Each embedding example started on an ephemeral port, called over real HTTP: the host
 * application's own route, Waybill's `/health`, authenticated endpoints through the typed
 * client, a request body streamed through the mount, and the contract's error bodies.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Client from "@waybill/http/Client"
import { Effect } from "effect"
import * as Express from "../src/express.js"
import * as Hono from "../src/hono.js"
import type { Running } from "../src/Main.js"
import * as NodeHttp from "../src/node-http.js"
import { startOnMigratedDatabase } from "./started.js"

const key = "embed-test-key-0001"
const env = { WAYBILL_API_KEYS: `acme:${key}` }

const examples = [
  { name: "node:http", start: NodeHttp.start },
  { name: "Express 5", start: Express.start },
  { name: "Hono", start: Hono.start }
] as const

for (const example of examples) {
  describe(`examples/embed: ${example.name}`, () => {
    let running: Running
    beforeAll(async () => {
      running = await startOnMigratedDatabase(example.start, env)
    }, 120_000)
    afterAll(() => running?.close())

    it("serves the application's own routes and Waybill's /health beside each other", async () => {
      const own = await fetch(`${running.url}/`)
      assert.deepStrictEqual(await own.json(), { app: "my backend" })
      const health = await fetch(`${running.url}/waybill/health`)
      assert.strictEqual(health.status, 200)
      assert.deepStrictEqual(await health.json(), { status: "ok" })
      const spec = await fetch(`${running.url}/waybill/openapi.json`)
      const document = (await spec.json()) as { openapi: string; servers?: ReadonlyArray<{ url: string }> }
      assert.strictEqual(document.openapi, "3.1.0")
      // The document names the mount path, so the API reference's samples and "try it" reach it.
      assert.deepStrictEqual(document.servers, [{ url: "/waybill" }])
      const docs = await (await fetch(`${running.url}/waybill/docs`)).text()
      assert.include(docs, '"servers":[{"url":"/waybill"}]')
    })

    it("serves the operator console under the mount path, its assets where the page points", async () => {
      const page = await fetch(`${running.url}/waybill/console`)
      assert.strictEqual(page.status, 200)
      const html = await page.text()
      const script = /src="([^"]+)"/.exec(html)![1]!
      const asset = await fetch(new URL(script, `${running.url}/waybill/console`))
      assert.strictEqual(asset.status, 200)
      assert.strictEqual(asset.headers.get("content-type"), "text/javascript; charset=utf-8")
      // The console's own API route still reaches the API: without a key, 401.
      const edit = await fetch(`${running.url}/waybill/console/api/webhooks/whk_x`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: "{}"
      })
      assert.strictEqual(edit.status, 401)
    })

    it.live("answers authenticated endpoints through the typed client", () =>
      Effect.gen(function* () {
        const waybill = yield* Client.make({ baseUrl: `${running.url}/waybill`, apiKey: key })
        const shapes = yield* waybill.referenceData.transportShapes()
        assert.isTrue(shapes.data.some((shape) => shape.id === "shape_line"))
        const draft = yield* waybill.drafts.create({
          payload: { origin: "manual", status: "draft", name: "from the embed test", transportShapeId: "shape_line" }
        })
        const read = yield* waybill.drafts.get({ path: { id: draft.id } })
        assert.strictEqual(read.name, "from the embed test")
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )

    it("answers the contract's errors: 401 without a key, 400 with every issue, 413 over 1 MiB", async () => {
      const anonymous = await fetch(`${running.url}/waybill/transport-shapes`)
      assert.strictEqual(anonymous.status, 401)
      assert.strictEqual(((await anonymous.json()) as { code: string }).code, "unauthorized")

      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
      const invalid = await fetch(`${running.url}/waybill/drafts`, {
        method: "POST",
        headers,
        body: JSON.stringify({ origin: "fax", status: "open", transportShapeId: "shape_line" })
      })
      assert.strictEqual(invalid.status, 400)
      const body = (await invalid.json()) as { code: string; issues: Array<{ path: string }> }
      assert.strictEqual(body.code, "bad_request")
      assert.includeMembers(
        body.issues.map((issue) => issue.path),
        ["origin", "status"]
      )

      const large = await fetch(`${running.url}/waybill/drafts`, {
        method: "POST",
        headers,
        body: JSON.stringify({ blob: "x".repeat(1024 * 1024) })
      })
      assert.strictEqual(large.status, 413)
      assert.strictEqual(((await large.json()) as { code: string }).code, "payload_too_large")
    })
  })
}

describe("examples/embed: Express serves Waybill's metrics", () => {
  const token = "embed-metrics-token-0001"
  let running: Running
  beforeAll(async () => {
    running = await startOnMigratedDatabase(Express.start, { ...env, WAYBILL_METRICS_TOKEN: token })
  }, 120_000)
  afterAll(() => running?.close())

  it("at /metrics, to its bearer token only, with the mounted API's requests by route template", async () => {
    await fetch(`${running.url}/waybill/drafts/drf_00000000000000000000000000`, {
      headers: { authorization: `Bearer ${key}` }
    })
    for (const authorization of [undefined, `Bearer ${key}`]) {
      const refused = await fetch(
        `${running.url}/metrics`,
        authorization === undefined ? {} : { headers: { authorization } }
      )
      assert.strictEqual(refused.status, 401)
    }
    const metrics = await fetch(`${running.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
    assert.strictEqual(metrics.status, 200)
    assert.strictEqual(metrics.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8")
    const text = await metrics.text()
    assert.include(text, 'waybill_http_requests_total{method="GET",route="/drafts/{id}",status="404",auth="api-key"}')
    assert.include(text, "waybill_database_up 1")
    assert.notInclude(text, "drf_00000000000000000000000000")
  })
})
