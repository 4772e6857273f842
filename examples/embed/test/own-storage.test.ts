/**
 * src/own-storage.ts: the API over ports the embedder provides, per-workspace reference data.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as ApiError from "@waybill/http/ApiError"
import * as Client from "@waybill/http/Client"
import * as OutboxReader from "@waybill/webhooks/OutboxReader"
import { Effect, Layer } from "effect"
import * as OwnStorage from "../src/own-storage.js"
import * as OwnUsers from "../src/own-users.js"

const keys = { acme: "acme-key-0000000001", globex: "globex-key-000000001" }
const web = OwnStorage.make(keys)
afterAll(() => web.dispose())

const fetchLayer = FetchHttpClient.layer.pipe(
  Layer.provide(Layer.succeed(FetchHttpClient.Fetch, (input, init) => web.handler(new Request(input, init))))
)
const as = (apiKey: string) => Client.make({ baseUrl: "http://embedded.test", apiKey })

describe("own storage through the ports", () => {
  it.live("serves each workspace its own reference data, and validates drafts against it", () =>
    Effect.gen(function* () {
      const acme = yield* as(keys.acme)
      const globex = yield* as(keys.globex)
      assert.deepStrictEqual(
        (yield* acme.referenceData.transportShapes()).data.map((shape) => shape.id),
        ["acme_line"]
      )
      assert.deepStrictEqual((yield* globex.referenceData.transportShapes()).data, [])

      const payload = { origin: "manual", status: "draft", transportShapeId: "acme_line" } as const
      const draft = yield* acme.drafts.create({ payload })
      assert.strictEqual(draft.transportShapeId, "acme_line")
      const refused = yield* Effect.flip(globex.drafts.create({ payload }))
      assert.instanceOf(refused, ApiError.BadRequest)
      assert.deepStrictEqual(
        (refused as ApiError.BadRequest).issues.map((issue) => issue.path),
        ["transportShapeId"]
      )
    }).pipe(Effect.provide(fetchLayer))
  )

  it.live("keeps the webhook rules: plain http targets are refused", () =>
    Effect.gen(function* () {
      const acme = yield* as(keys.acme)
      const refused = yield* Effect.flip(
        acme.webhooks.register({
          payload: { url: "http://hooks.example.org/", events: ["tour-created"], auth: { type: "bearer", token: "t" } }
        })
      )
      assert.instanceOf(refused, ApiError.BadRequest)
      assert.include(
        (refused as ApiError.BadRequest).issues.map((issue) => issue.path),
        "url"
      )
    }).pipe(Effect.provide(fetchLayer))
  )
})

describe("own users", () => {
  it.effect("an action on behalf of a host's user is recorded, and published, with that user as actor", () =>
    Effect.gen(function* () {
      const action = yield* OwnUsers.activateLine({ id: "usr_4711", workspace: "acme" })
      assert.deepStrictEqual(action.actor, { type: "operator-user", id: "usr_4711" })
      const reader = yield* OutboxReader.OutboxReader
      const published = (yield* reader.read("0", 10)).events.filter(
        (event) => event.type === "transport-draft-action-created"
      )
      assert.strictEqual(published.length, 1)
      assert.deepStrictEqual(JSON.parse(published[0]!.body).payload.action.actor, {
        type: "operator-user",
        id: "usr_4711"
      })
    }).pipe(Effect.provide(OwnStorage.layer(keys)))
  )
})
