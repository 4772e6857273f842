import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, ParseResult, Redacted } from "effect"
import * as ApiError from "../src/ApiError.js"
import * as Client from "../src/Client.js"
import * as Http from "../src/Http.js"
import { keyA, keyB, master, ports } from "./fixtures.js"

// The API over in-memory ports, served in-process by the web handler.
const web = Http.toWebHandler(ports)
afterAll(() => web.dispose())

interface Seen {
  readonly url: string
  readonly authorization: string | null
}

/**
 * An HttpClient whose fetch goes to the web handler (mounted under `prefix`, which is stripped as
 * a host framework would), remembering what was sent.
 */
const httpClient = (seen: Array<Seen>, prefix = "") =>
  FetchHttpClient.layer.pipe(
    Layer.provide(
      Layer.succeed(FetchHttpClient.Fetch, (input, init) => {
        const request = new Request(input, init)
        seen.push({ url: request.url, authorization: request.headers.get("authorization") })
        const url = new URL(request.url)
        if (!url.pathname.startsWith(`${prefix}/`)) return Promise.resolve(new Response(null, { status: 502 }))
        url.pathname = url.pathname.slice(prefix.length)
        return web.handler(new Request(url, request))
      })
    )
  )

const withClient = <A, E>(
  options: Client.Options & { readonly prefix?: string },
  body: (client: Client.Client, seen: ReadonlyArray<Seen>) => Effect.Effect<A, E>
) => {
  const seen: Array<Seen> = []
  return Effect.flatMap(Client.make(options), (client) => body(client, seen)).pipe(
    Effect.provide(httpClient(seen, options.prefix))
  )
}

describe("Client", () => {
  it.live("sends Authorization: Bearer <key> to the base URL and decodes typed responses", () =>
    withClient({ baseUrl: "http://waybill.test", apiKey: Redacted.make(keyA) }, (client, seen) =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* client.system.health(), { status: "ok" })
        const shapes = yield* client.referenceData.transportShapes()
        assert.deepStrictEqual(
          shapes.data.map((shape) => shape.id),
          ["shape_line"]
        )
        const draft = yield* client.drafts.create({ payload: master })
        assert.match(draft.id, /^drf_/)
        assert.strictEqual(draft.status, "draft")
        assert.isNotNull(draft.recurringSchedule)
        const read = yield* client.drafts.get({ path: { id: draft.id } })
        assert.deepStrictEqual(read, draft)
        const page = yield* client.drafts.list({ urlParams: {} })
        assert.deepStrictEqual(
          page.data.map((item) => item.id),
          [draft.id]
        )
        const acted = yield* client.drafts.act({ path: { id: draft.id }, payload: { type: "activate-recurring" } })
        assert.strictEqual(acted.transportDraft.status, "active-recurring")
        assert.strictEqual(acted.action.payload.type, "activate-recurring")
        assert.isAbove(seen.length, 5)
        for (const request of seen) {
          assert.strictEqual(request.authorization, `Bearer ${keyA}`)
          assert.isTrue(request.url.startsWith("http://waybill.test/"), request.url)
        }
      })
    )
  )

  it.live(
    "rotates a webhook's secret: the answer decodes with previousSecretExpiresAt; a refusal is a typed BadRequest",
    () =>
      withClient({ baseUrl: "http://waybill.test", apiKey: keyA }, (client) =>
        Effect.gen(function* () {
          const webhook = yield* client.webhooks.register({
            payload: {
              url: "https://hooks.example.org/client",
              events: ["tour-created"],
              auth: { type: "hmac", secret: "client-rotation-secret-01" }
            }
          })
          const rotated = yield* client.webhooks.rotate({
            path: { id: webhook.id },
            payload: { auth: { type: "hmac", secret: "client-rotation-secret-02" }, overlapSeconds: 3600 }
          })
          assert.strictEqual(rotated.id, webhook.id)
          assert.isTrue(rotated.auth.type === "hmac" && typeof rotated.auth.previousSecretExpiresAt === "number")
          const refused = yield* Effect.flip(
            client.webhooks.rotate({
              path: { id: webhook.id },
              payload: { auth: { type: "bearer", token: "a-token" } }
            })
          )
          assert.instanceOf(refused, ApiError.BadRequest)
          assert.deepStrictEqual(
            (refused as ApiError.BadRequest).issues.map((issue) => issue.path),
            ["auth.type"]
          )
          // The ports are shared with the other tests, which list this workspace's webhooks.
          yield* client.webhooks.delete({ path: { id: webhook.id } })
        })
      )
  )

  it.live("keeps a mount prefix of the base URL", () =>
    withClient({ baseUrl: "http://waybill.test/api/waybill", apiKey: keyA, prefix: "/api/waybill" }, (client, seen) =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* client.system.health(), { status: "ok" })
        const products = yield* client.referenceData.products()
        assert.deepStrictEqual(
          products.data.map((product) => product.id),
          ["prod_ftl"]
        )
        assert.deepStrictEqual(
          seen.map((request) => request.url),
          ["http://waybill.test/api/waybill/health", "http://waybill.test/api/waybill/products"]
        )
      })
    )
  )

  it.live("returns the contract's error bodies as typed failures", () =>
    Effect.gen(function* () {
      const unauthorized = yield* withClient({ baseUrl: "http://waybill.test", apiKey: "not-a-key" }, (client) =>
        Effect.flip(client.referenceData.products())
      )
      assert.instanceOf(unauthorized, ApiError.Unauthorized)
      assert.strictEqual((unauthorized as ApiError.Unauthorized).code, "unauthorized")

      yield* withClient({ baseUrl: "http://waybill.test", apiKey: keyA }, (client) =>
        Effect.gen(function* () {
          const missing = yield* Effect.flip(client.drafts.get({ path: { id: "drf_missing" } }))
          assert.instanceOf(missing, ApiError.NotFound)

          // The payload is valid for the schema, so it reaches the server, whose rules refuse it
          // with every issue.
          const oneStop = {
            ...master,
            transport: { ...master.transport, multiStopData: { stops: [master.transport.multiStopData.stops[0]] } }
          }
          const refused = yield* Effect.flip(client.drafts.create({ payload: oneStop }))
          assert.instanceOf(refused, ApiError.BadRequest)
          assert.include(
            (refused as ApiError.BadRequest).issues.map((issue) => issue.path),
            "transport.multiStopData.stops"
          )

          const plain = yield* client.drafts.create({
            payload: { origin: "manual", status: "draft", transportShapeId: "shape_line" }
          })
          const conflict = yield* Effect.flip(
            client.drafts.act({ path: { id: plain.id }, payload: { type: "pause-recurring" } })
          )
          assert.instanceOf(conflict, ApiError.Conflict)
          assert.strictEqual((conflict as ApiError.Conflict).code, "invalid_transition")

          // Another workspace's key does not see the draft.
          const foreign = yield* withClient({ baseUrl: "http://waybill.test", apiKey: keyB }, (other) =>
            Effect.either(other.drafts.get({ path: { id: plain.id } }))
          )
          assert.isTrue(Either.isLeft(foreign) && foreign.left instanceof ApiError.NotFound)
        })
      )
    })
  )

  it.live("covers the tours and webhooks groups too; secrets come back masked", () =>
    withClient({ baseUrl: "http://waybill.test", apiKey: keyA }, (client) =>
      Effect.gen(function* () {
        const webhook = yield* client.webhooks.register({
          payload: {
            url: "https://hooks.example.org/waybill",
            events: ["tour-created"],
            auth: { type: "hmac", secret: "a shared secret of 16+ characters" }
          }
        })
        assert.match(webhook.id, /^whk_/)
        assert.deepStrictEqual(webhook.auth, { type: "hmac", secret: "********", scheme: "waybill" })
        const listed = yield* client.webhooks.list({ urlParams: {} })
        assert.deepStrictEqual(
          listed.data.map((item) => item.id),
          [webhook.id]
        )
        const tours = yield* client.tours.list({ urlParams: {} })
        assert.deepStrictEqual(tours.data, [])
      })
    )
  )

  it.live("resends and replays through the typed client, with the contract errors typed", () =>
    withClient({ baseUrl: "http://waybill.test", apiKey: keyA }, (client) =>
      Effect.gen(function* () {
        const webhook = yield* client.webhooks.register({
          payload: {
            url: "https://hooks.example.org/waybill",
            events: ["tour-created"],
            auth: { type: "hmac", secret: "a shared secret of 16+ characters", scheme: "waybill" }
          }
        })
        const since = Math.floor(Date.now() / 1000) - 60
        assert.deepStrictEqual(yield* client.webhooks.replay({ path: { id: webhook.id }, payload: { since } }), {
          deliveries: 0
        })
        const bad = yield* Effect.either(
          client.webhooks.replay({ path: { id: webhook.id }, payload: { since, until: since } })
        )
        assert.isTrue(Either.isLeft(bad) && bad.left instanceof ApiError.BadRequest)
        const missing = yield* Effect.either(
          client.webhooks.resend({ path: { id: webhook.id, deliveryId: "dlv_unknown" } })
        )
        assert.isTrue(Either.isLeft(missing) && missing.left instanceof ApiError.NotFound)
      })
    )
  )

  it.live("reads delivery statistics through the typed client: every hour a bucket; bad hours a typed BadRequest", () =>
    withClient({ baseUrl: "http://waybill.test", apiKey: keyA }, (client) =>
      Effect.gen(function* () {
        const webhook = yield* client.webhooks.register({
          payload: {
            url: "https://hooks.example.org/stats",
            events: ["tour-created"],
            auth: { type: "hmac", secret: "a shared secret of 16+ characters" }
          }
        })
        const stats = yield* client.webhooks.stats({ path: { id: webhook.id }, urlParams: { hours: "6" } })
        assert.deepStrictEqual(
          { ...stats, buckets: stats.buckets.length },
          { succeeded: 0, failed: 0, pending: 0, held: 0, latencyMs: null, buckets: 6 }
        )
        const bad = yield* Effect.flip(client.webhooks.stats({ path: { id: webhook.id }, urlParams: { hours: "0" } }))
        assert.instanceOf(bad, ApiError.BadRequest)
        assert.deepStrictEqual(
          (bad as ApiError.BadRequest).issues.map((issue) => issue.path),
          ["hours"]
        )
        yield* client.webhooks.delete({ path: { id: webhook.id } })
      })
    )
  )

  it.live("refuses a payload its schema rejects before sending anything", () =>
    withClient({ baseUrl: "http://waybill.test", apiKey: keyA }, (client, seen) =>
      Effect.gen(function* () {
        const payload = { origin: "fax", status: "draft", transportShapeId: "shape_line" } as unknown as Parameters<
          typeof client.drafts.create
        >[0]["payload"]
        const error = yield* Effect.flip(client.drafts.create({ payload }))
        assert.isTrue(ParseResult.isParseError(error))
        assert.strictEqual(seen.length, 0)
      })
    )
  )
})
