import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { assert, describe, it } from "@effect/vitest"
import * as ApiKeys from "@waybill/core/ApiKeys"
import * as ConsoleTokens from "@waybill/core/ConsoleTokens"
import { WorkspaceId } from "@waybill/core/Workspace"
import { Effect, Layer, Logger, Redacted, Schema } from "effect"
import { BadRequest } from "../src/ApiError.js"
import { describeFailures } from "../src/internal/contractErrors.js"
import * as RequestChecks from "../src/internal/requestChecks.js"
import { MAX_BODY_BYTES } from "../src/internal/requestChecks.js"

// A throw-away API exercising the generic failure handling, independent of any feature.
const Payload = Schema.Struct({
  name: Schema.String,
  count: Schema.Int,
  nested: Schema.Struct({ flag: Schema.Boolean })
}).annotations({ parseOptions: { errors: "all" } })

class TestApi extends HttpApi.make("test")
  .add(
    HttpApiGroup.make("things")
      .add(
        HttpApiEndpoint.post("create", "/things")
          .setPayload(Payload)
          .addSuccess(Schema.Struct({ ok: Schema.Boolean }))
      )
      .add(HttpApiEndpoint.get("explode", "/explode").addSuccess(Schema.String))
      .add(HttpApiEndpoint.get("outage", "/outage").addSuccess(Schema.String))
      .add(HttpApiEndpoint.post("poke", "/poke").addSuccess(Schema.String))
  )
  .addError(BadRequest) {}

const ThingsLive = HttpApiBuilder.group(TestApi, "things", (handlers) =>
  handlers
    .handle("create", () => Effect.succeed({ ok: true }))
    .handle("explode", () => Effect.die(new Error("database password hunter2 leaked in a stack")))
    .handle("outage", () => Effect.die(new DatabaseDown("connect ECONNREFUSED 10.0.0.7:5432 as admin/hunter2")))
    .handle("poke", () => Effect.succeed("poked"))
)

// What an Availability port would call an outage: here, one error class.
class DatabaseDown extends Error {}

const KEY = "contract-errors-test-key"
const keys = Layer.merge(
  ApiKeys.layer([{ workspaceId: Schema.decodeSync(WorkspaceId)("ws-a"), key: Redacted.make(KEY) }]).pipe(
    Layer.provide(ApiKeys.layerStoreMemory)
  ),
  ConsoleTokens.layer.pipe(Layer.provide(ConsoleTokens.layerStoreMemory))
)

const describe_ = describeFailures((defect) => defect instanceof DatabaseDown)
const { handler, dispose } = HttpApiBuilder.toWebHandler(
  Layer.mergeAll(
    HttpApiBuilder.api(TestApi).pipe(
      Layer.provide([
        ThingsLive,
        HttpApiBuilder.middleware(
          TestApi,
          Effect.map(
            RequestChecks.make(() => undefined),
            (checks) => (app) =>
              describe_(checks(app)) as HttpApp.Default<BadRequest, HttpServerRequest.HttpServerRequest>
          )
        ).pipe(Layer.provide(keys))
      ])
    ),
    HttpServer.layerContext,
    // The failures here are expected: their log lines would only lengthen a passing run.
    Logger.remove(Logger.defaultLogger)
  )
)

const call = (path: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const headers = new Headers(init.headers)
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${KEY}`)
    const response = await handler(new Request(`http://test${path}`, { ...init, headers }))
    const text = await response.text()
    return {
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      body: text === "" ? undefined : JSON.parse(text)
    }
  })

const post = (body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
  call("/things", { method: "POST", body, headers })

describe("contract error bodies", () => {
  it.effect("a schema violation lists every issue with its path", () =>
    Effect.gen(function* () {
      const { status, body } = yield* post(JSON.stringify({ name: 1, count: 1.5, nested: { flag: "x" } }))
      assert.strictEqual(status, 400)
      assert.strictEqual(body.code, "bad_request")
      assert.deepStrictEqual(body.issues.map((issue: { path: string }) => issue.path).sort(), [
        "count",
        "name",
        "nested.flag"
      ])
      assert.isString(body.message)
    })
  )

  it.effect("malformed JSON is 400, a wrong media type 415, an oversized body 413", () =>
    Effect.gen(function* () {
      const malformed = yield* post('{"name":')
      assert.strictEqual(malformed.status, 400)
      assert.strictEqual(malformed.body.code, "bad_request")
      assert.deepStrictEqual(malformed.body.issues, [])
      const text = yield* post("{}", { "content-type": "text/plain" })
      assert.deepStrictEqual([text.status, text.body.code], [415, "unsupported_media_type"])
      const missing = yield* call("/things", { method: "POST", body: new Blob(["{}"]) })
      assert.deepStrictEqual([missing.status, missing.body.code], [415, "unsupported_media_type"])
      const charset = yield* post(JSON.stringify({ name: "a", count: 1, nested: { flag: true } }), {
        "content-type": "application/json; charset=utf-8"
      })
      assert.strictEqual(charset.status, 200)
      const large = yield* post(JSON.stringify({ name: "x".repeat(MAX_BODY_BYTES) }))
      assert.deepStrictEqual([large.status, large.body.code], [413, "payload_too_large"])
    })
  )

  it.effect(
    "a POST without a body needs no media type, also as a Node adapter hands it over (an empty stream, content-length 0)",
    () =>
      Effect.gen(function* () {
        const bare = yield* call("/poke", { method: "POST" })
        assert.deepStrictEqual([bare.status, bare.body], [200, "poked"])
        // What @hono/node-server's getRequestListener makes of `POST /poke` with `content-length: 0`.
        const adapted = yield* call("/poke", {
          method: "POST",
          body: new ReadableStream({ start: (controller) => controller.close() }),
          headers: { "content-length": "0" },
          duplex: "half"
        } as RequestInit)
        assert.deepStrictEqual([adapted.status, adapted.body], [200, "poked"])
      })
  )

  it.effect("a body nested deeper than 64 levels is 400 at the path where the limit is crossed", () =>
    Effect.gen(function* () {
      // `nested` is a struct that ignores unknown keys: a deep value under one reaches the route.
      const body = (levels: number) =>
        `{"name":"a","count":1,"nested":{"flag":true,"deep":${"[".repeat(levels - 2)}${"]".repeat(levels - 2)}}}`
      const accepted = yield* post(body(64))
      assert.strictEqual(accepted.status, 200)
      for (const levels of [65, 5_000, 100_000]) {
        const refused = yield* post(body(levels))
        assert.strictEqual(refused.status, 400)
        assert.deepStrictEqual(refused.body, {
          code: "bad_request",
          message: "The request body nests deeper than 64 levels of objects and arrays",
          issues: [
            {
              path: ["nested", "deep", ...Array(62).fill("0")].join("."),
              message: "nests deeper than 64 levels of objects and arrays"
            }
          ]
        })
      }
      // JSON.parse itself survives the deepest body the size limit lets through.
      const half = MAX_BODY_BYTES / 2
      const brackets = yield* post(`${"[".repeat(half)}${"]".repeat(half)}`)
      assert.deepStrictEqual([brackets.status, brackets.body.issues[0].path], [400, Array(64).fill("0").join(".")])
    })
  )

  it.effect("unknown routes are 404 with the contract body", () =>
    Effect.gen(function* () {
      const { status, body } = yield* call("/nowhere")
      assert.strictEqual(status, 404)
      assert.deepStrictEqual(body, { code: "not_found", message: "No route for GET /nowhere", issues: [] })
      const wrongMethod = yield* call("/explode", { method: "DELETE" })
      assert.strictEqual(wrongMethod.status, 404)
    })
  )

  it.effect("an unreachable database is 503 unavailable with Retry-After, and reveals nothing", () =>
    Effect.gen(function* () {
      for (let i = 0; i < 3; i++) {
        const { status, retryAfter, body } = yield* call("/outage")
        assert.strictEqual(status, 503)
        assert.strictEqual(retryAfter, "5")
        assert.deepStrictEqual(body, {
          code: "unavailable",
          message: "The database cannot be reached; nothing was written. Try again shortly.",
          issues: []
        })
      }
    })
  )

  it.effect("an unexpected failure is 500 and reveals nothing", () =>
    Effect.gen(function* () {
      const { status, retryAfter, body } = yield* call("/explode")
      assert.strictEqual(status, 500)
      assert.isNull(retryAfter)
      assert.deepStrictEqual(body, { code: "internal", message: "Internal server error", issues: [] })
      yield* Effect.promise(dispose)
    })
  )
})
