import { request } from "node:http"
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { baseUrl, call, forEachServer, isErrorBody, keys } from "./harness.js"

forEachServer("foundation", (it) => {
  it.effect("GET /health needs no key", () =>
    Effect.gen(function* () {
      const reply = yield* call("/health")
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(reply.body, { status: "ok" })
    })
  )

  it.effect("GET /openapi.json is OpenAPI 3.1 and needs no key; /docs serves the reference", () =>
    Effect.gen(function* () {
      const spec = yield* call("/openapi.json")
      assert.strictEqual(spec.status, 200)
      assert.strictEqual(spec.body.openapi, "3.1.0")
      assert.property(spec.body.paths, "/transport-shapes")
      assert.deepStrictEqual(spec.body.components.securitySchemes.apiKey, { type: "http", scheme: "bearer" })
      const docs = yield* call("/docs")
      assert.strictEqual(docs.status, 200)
      assert.match(docs.headers.get("content-type") ?? "", /text\/html/)
      // Scalar's page, its script inline (read from the platform's module when asked for).
      assert.include(docs.text, '<script id="api-reference" type="application/json">')
      assert.include(docs.text, "@scalar/api-reference")
    })
  )

  it.effect("a missing, malformed, empty or unknown key is 401, with the same body whatever the reason", () =>
    Effect.gen(function* () {
      const bodies = new Set<string>()
      const attempts = [
        {},
        { authorization: `Basic ${keys.a}` },
        { authorization: "Bearer " },
        { authorization: `Bearer ${keys.a}x` },
        { authorization: `bearer-${keys.a}` },
        { authorization: `Bearer ${keys.a} extra` }
      ]
      for (const headers of attempts) {
        const reply = yield* call("/transport-shapes", { headers })
        assert.isTrue(isErrorBody(reply, 401, "unauthorized"), `${JSON.stringify(headers)} → ${reply.text}`)
        assert.isFalse(reply.text.includes(keys.a))
        bodies.add(reply.text)
      }
      assert.strictEqual(bodies.size, 1, [...bodies].join("\n"))
    })
  )

  it.effect("reference data is served to any workspace's key", () =>
    Effect.gen(function* () {
      for (const key of [keys.a, keys.b]) {
        const shapes = yield* call("/transport-shapes", { key })
        assert.strictEqual(shapes.status, 200)
        assert.isTrue(shapes.body.data.some((shape: { id: string }) => shape.id === "shape_line"))
        const classes = yield* call("/vehicle-classes", { key })
        assert.isTrue(classes.body.data.length > 0)
        const products = yield* call("/products", { key })
        assert.isTrue(products.body.data.some((product: { id: string }) => product.id === "prod_ftl"))
      }
    })
  )

  it.effect("unknown routes and methods are 404 with the contract body", () =>
    Effect.gen(function* () {
      assert.isTrue(isErrorBody(yield* call("/nope", { key: keys.a }), 404, "not_found"))
      assert.isTrue(isErrorBody(yield* call("/health", { method: "DELETE" }), 404, "not_found"))
    })
  )

  it.effect("bodies: wrong media type 415, malformed JSON 400, over 1 MiB 413 (declared or chunked)", () =>
    Effect.gen(function* () {
      const typed = yield* call("/transport-shapes", {
        key: keys.a,
        method: "POST",
        body: "{}",
        headers: { "content-type": "text/plain" }
      })
      assert.isTrue(isErrorBody(typed, 415, "unsupported_media_type"))
      const malformed = yield* call("/transport-shapes", {
        key: keys.a,
        method: "POST",
        body: '{"a":',
        headers: { "content-type": "application/json" }
      })
      assert.isTrue(isErrorBody(malformed, 400, "bad_request"))
      const big = JSON.stringify({ blob: "x".repeat(1024 * 1024) })
      const declared = yield* call("/transport-shapes", {
        key: keys.a,
        method: "POST",
        body: big,
        headers: { "content-type": "application/json" }
      })
      assert.isTrue(isErrorBody(declared, 413, "payload_too_large"))
      // A chunked body carries no length: the limit applies while reading.
      const base = yield* baseUrl
      const chunked = yield* Effect.async<{ status: number; body: string }>((resume) => {
        const req = request(
          `${base}/transport-shapes`,
          {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${keys.a}` }
          },
          (res) => {
            let body = ""
            res.on("data", (chunk) => (body += chunk))
            res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body })))
          }
        )
        req.on("error", () => resume(Effect.succeed({ status: 0, body: "" })))
        for (let i = 0; i < 20; i++) req.write("x".repeat(64 * 1024))
        req.end()
      })
      assert.strictEqual(chunked.status, 413)
      assert.strictEqual(JSON.parse(chunked.body).code, "payload_too_large")
    })
  )
})
