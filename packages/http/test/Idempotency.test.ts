/**
 * `Idempotency-Key` over HTTP (contract §8) on in-memory ports, through the direct routes (as
 * served) and through the router alike: the first answer and its replays byte for byte with
 * `Idempotent-Replayed: true`, 422 `idempotency_key_reused` for another body or route, 400 at
 * `Idempotency-Key` for a bad key, keys per workspace, nothing kept for a 400; and the typed
 * client's `withIdempotencyKey`.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as ApiError from "../src/ApiError.js"
import * as Client from "../src/Client.js"
import * as Http from "../src/Http.js"
import { layerApiWith } from "../src/internal/apiLayer.js"
import { keyA, keyB, master, ports } from "./fixtures.js"

const direct = Http.toWebHandler(ports)
const routed = HttpApiBuilder.toWebHandler(
  HttpServer.layerContext.pipe(Layer.provideMerge(layerApiWith({ directRoutes: false })), Layer.provide(ports))
)
afterAll(async () => {
  await direct.dispose()
  await routed.dispose()
})

type Handler = (request: Request) => Promise<Response>

const post = async (handler: Handler, path: string, body: string, key?: string, apiKey: string = keyA) => {
  const response = await handler(
    new Request(`http://waybill.test${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${apiKey}`,
        "content-type": "application/json",
        ...(key === undefined ? {} : { "idempotency-key": key })
      },
      body
    })
  )
  const text = await response.text()
  return {
    status: response.status,
    replayed: response.headers.get("idempotent-replayed"),
    text,
    body: JSON.parse(text) as { code?: string; issues?: ReadonlyArray<{ path: string }>; id?: string }
  }
}

const bodies = {
  "/drafts": JSON.stringify(master),
  "/events": JSON.stringify({ type: "tour-deleted", payload: { tourId: "tour_idem" } }),
  "/webhooks": JSON.stringify({
    url: "https://hooks.example.org/idem",
    events: ["tour-created"],
    auth: { type: "bearer", token: "idem-token" }
  })
} as const

const created = { "/drafts": 201, "/events": 202, "/webhooks": 201 } as const

describe("Idempotency-Key over HTTP", () => {
  for (const [name, handler] of [
    ["direct routes", direct.handler],
    ["router", routed.handler]
  ] as const) {
    for (const path of ["/drafts", "/events", "/webhooks"] as const) {
      it.live(`${path} (${name}): replays the first answer byte for byte; another body is 422`, () =>
        Effect.promise(async () => {
          const key = `key-${name.replace(" ", "-")}-${path}`
          const first = await post(handler, path, bodies[path], key)
          assert.strictEqual(first.status, created[path], first.text)
          assert.isNull(first.replayed)
          // The same JSON value, spaced and ordered differently.
          const respaced = JSON.stringify(
            Object.fromEntries(Object.entries(JSON.parse(bodies[path])).reverse()),
            null,
            2
          )
          const again = await post(handler, path, respaced, key)
          assert.deepStrictEqual([again.status, again.replayed, again.text], [first.status, "true", first.text])
          const other = await post(handler, path, bodies[path].replace(/idem|Line/, "other"), key)
          assert.strictEqual(other.status, 422, other.text)
          assert.deepStrictEqual(Object.keys(other.body).sort(), ["code", "issues", "message"])
          assert.strictEqual(other.body.code, "idempotency_key_reused")
          // Another workspace has keys of its own.
          const elsewhere = await post(handler, path, bodies[path], key, keyB)
          assert.deepStrictEqual([elsewhere.status, elsewhere.replayed], [created[path], null])
        })
      )
    }

    it.live(`(${name}) a key is per route too; bad keys are 400 at Idempotency-Key; a 400 keeps nothing`, () =>
      Effect.promise(async () => {
        const key = `shared-${name.replace(" ", "-")}`
        assert.strictEqual((await post(handler, "/events", bodies["/events"], key)).status, 202)
        const otherRoute = await post(handler, "/drafts", bodies["/events"], key)
        assert.deepStrictEqual([otherRoute.status, otherRoute.body.code], [422, "idempotency_key_reused"])
        for (const bad of ["with space", "x".repeat(256), "tab\there"]) {
          const refused = await post(handler, "/events", bodies["/events"], bad)
          assert.strictEqual(refused.status, 400, refused.text)
          assert.deepStrictEqual(
            refused.body.issues?.map((issue) => issue.path),
            ["Idempotency-Key"]
          )
        }
        const invalid = await post(
          handler,
          "/drafts",
          JSON.stringify({ origin: "manual" }),
          `fix-${name.replace(" ", "-")}`
        )
        assert.strictEqual(invalid.status, 400)
        const corrected = await post(handler, "/drafts", bodies["/drafts"], `fix-${name.replace(" ", "-")}`)
        assert.deepStrictEqual([corrected.status, corrected.replayed], [201, null])
      })
    )
  }
})

describe("Client.withIdempotencyKey", () => {
  it.live("sends the key: a retry gets the first answer, another body a typed 422", () =>
    Effect.gen(function* () {
      const client = yield* Client.make({ baseUrl: "http://waybill.test", apiKey: keyA })
      const publish = (tourId: string) =>
        client.webhooks
          .publish({ payload: { type: "tour-deleted", payload: { tourId } }, withResponse: true })
          .pipe(Client.withIdempotencyKey("client-key-1"))
      const [first, firstResponse] = yield* publish("tour_client")
      const [again, againResponse] = yield* publish("tour_client")
      assert.strictEqual(again.id, first.id)
      assert.isUndefined(firstResponse.headers["idempotent-replayed"])
      assert.strictEqual(againResponse.headers["idempotent-replayed"], "true")
      const reused = yield* Effect.flip(publish("tour_other"))
      assert.instanceOf(reused, ApiError.IdempotencyKeyReused)
      // Without the combinator, no key: two events.
      const plain = client.webhooks.publish({ payload: { type: "tour-deleted", payload: { tourId: "tour_client" } } })
      assert.notStrictEqual((yield* plain).id, (yield* plain).id)
    }).pipe(
      Effect.provide(
        FetchHttpClient.layer.pipe(
          Layer.provide(Layer.succeed(FetchHttpClient.Fetch, (input, init) => direct.handler(new Request(input, init))))
        )
      )
    )
  )
})
