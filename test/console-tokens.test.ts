/**
 * Console tokens over HTTP (contract §5 and §1's 403): minted, listed and revoked with an API key;
 * a token reaches the console's routes of its scope in its workspace only, every other route
 * that takes a credential answers it 403, another workspace's resources stay 404, an expired or
 * revoked token is 401, and so are two `Authorization` headers.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import { assert } from "@effect/vitest"
import { WaybillApi } from "@waybill/http/Api"
import * as AdjustableClock from "@waybill/server/AdjustableClock"
import { Effect, Metric } from "effect"
import { baseUrl, call, forEachServer, isErrorBody, keys, type Reply } from "./harness.js"
import { withHeaderLines } from "./raw-http.js"

const clock = AdjustableClock.make()

// The least scope that reaches each of the console's endpoints (contract §5); no scope reaches the rest.
const leastScope: Readonly<Record<string, "read" | "manage">> = {
  "webhooks.list": "read",
  "webhooks.get": "read",
  "webhooks.deliveries": "read",
  "webhooks.stats": "read",
  "webhooks.filterFields": "read",
  "webhooks.alerts": "read",
  "console.whoami": "read",
  "webhooks.register": "manage",
  "console.updateWebhook": "manage",
  "webhooks.delete": "manage",
  "webhooks.rotate": "manage",
  "webhooks.disable": "manage",
  "webhooks.enable": "manage",
  "webhooks.resend": "manage",
  "webhooks.replay": "manage"
}

const reaches = (scope: "read" | "manage", name: string) =>
  leastScope[name] === "read" || (scope === "manage" && leastScope[name] === "manage")

interface Route {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly open: boolean
}

// Every endpoint of the API definition, as a request: the route classes come from the definition
// itself, so a route added later is covered too.
const routes: ReadonlyArray<Route> = (() => {
  const found: Array<Route> = []
  HttpApi.reflect(WaybillApi, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint }) =>
      found.push({
        name: `${group.identifier}.${endpoint.name}`,
        method: endpoint.method,
        path: endpoint.path,
        open: group.identifier === "system"
      })
  })
  return found
})()

const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`
const webhookBody = (url: string) => ({ url, events: ["tour-created"], auth: { type: "hmac", secret } })

const sendTo = (route: Route, credential: string, ids: { readonly webhook: string; readonly token: string }) => {
  const path = route.path
    .replace(":id", route.name.startsWith("consoleTokens") ? ids.token : ids.webhook)
    .replace(":deliveryId", "dlv_unknown")
    .replace(":productId", "prod_ftl")
  const query = route.name === "webhooks.filterFields" ? "?event=tour-created" : ""
  const json =
    route.method === "GET" || route.method === "DELETE"
      ? undefined
      : route.name === "webhooks.register" || route.name === "console.updateWebhook"
        ? webhookBody("https://receiver.example/edited")
        : route.name === "webhooks.replay"
          ? { since: Math.floor(clock.unsafeCurrentTimeMillis() / 1000) - 60 }
          : route.name === "webhooks.rotate"
            ? { auth: { type: "hmac", secret } }
            : {}
  return call(`${path}${query}`, { method: route.method, key: credential, ...(json === undefined ? {} : { json }) })
}

const mint = (body: unknown, key: string = keys.a) =>
  call("/console/tokens", { key, json: body }).pipe(
    Effect.tap((reply) => Effect.sync(() => assert.strictEqual(reply.status, 201, reply.text)))
  )

const consoleTokenRequests = () => {
  const snapshot = Metric.globalMetricRegistry.snapshot()
  let total = 0
  for (const pair of snapshot) {
    if (pair.metricKey.name !== "waybill_http_requests_total") continue
    if (!pair.metricKey.tags.some((tag) => tag.key === "auth" && tag.value === "console-token")) continue
    total += (pair.metricState as unknown as { readonly count: number }).count
  }
  return total
}

forEachServer(
  "console tokens",
  (it) => {
    it.effect("are minted with an API key, with defaults, a url to the console, and checked input", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const minted = yield* mint({})
        const now = Math.floor(clock.unsafeCurrentTimeMillis() / 1000)
        assert.deepStrictEqual(Object.keys(minted.body).sort(), ["expiresAt", "id", "label", "scope", "token", "url"])
        assert.match(minted.body.id, /^cst_/)
        assert.match(minted.body.token, /^wbc_/)
        assert.strictEqual(minted.body.scope, "manage")
        assert.strictEqual(minted.body.label, null)
        assert.approximately(minted.body.expiresAt, now + 3600, 5)
        assert.strictEqual(minted.body.url, `${base}/console#token=${minted.body.token}`)
        const labelled = yield* mint({ ttlSeconds: 60, scope: "read", label: "Ada Lovelace" })
        assert.strictEqual(labelled.body.scope, "read")
        assert.strictEqual(labelled.body.label, "Ada Lovelace")

        const refused = yield* call("/console/tokens", {
          key: keys.a,
          json: { ttlSeconds: 604801, scope: "admin", label: "x".repeat(101) }
        })
        assert.isTrue(isErrorBody(refused, 400, "bad_request"), refused.text)
        assert.deepStrictEqual(
          refused.body.issues.map((issue: { path: string }) => issue.path),
          ["ttlSeconds", "scope", "label"]
        )
        assert.strictEqual((yield* call("/console/tokens", { json: {} })).status, 401)

        // Listed without values, newest first; another workspace sees none of them.
        const listed = yield* call("/console/tokens", { key: keys.a })
        assert.strictEqual(listed.status, 200)
        const ids = listed.body.data.map((token: { id: string }) => token.id)
        assert.includeMembers(ids, [minted.body.id, labelled.body.id])
        assert.isBelow(ids.indexOf(labelled.body.id), ids.indexOf(minted.body.id))
        assert.notInclude(listed.text, minted.body.token)
        assert.notInclude(listed.text, "wbc_")
        assert.deepStrictEqual(Object.keys(listed.body.data[0]).sort(), [
          "createdAt",
          "expiresAt",
          "id",
          "label",
          "scope"
        ])
        assert.notInclude((yield* call("/console/tokens", { key: keys.b })).text, minted.body.id)
      })
    )

    it.effect("reach the console's routes of their scope, 403 on every other route, 404 for another workspace's", () =>
      Effect.gen(function* () {
        const metered = consoleTokenRequests()
        let sent = 0
        for (const scope of ["read", "manage"] as const) {
          for (const route of routes) {
            // Fresh ones per route: the routes delete, rotate and disable what they are given.
            const webhook = yield* call("/webhooks", { key: keys.a, json: webhookBody("https://receiver.example/a") })
            assert.strictEqual(webhook.status, 201, webhook.text)
            const spare = yield* mint({ ttlSeconds: 600 })
            const token = (yield* mint({ ttlSeconds: 600, scope })).body.token
            const ids = { webhook: webhook.body.id, token: spare.body.id }
            const reply: Reply = yield* sendTo(route, token, ids)
            sent++
            const what = `${scope} ${route.method} ${route.path}: ${reply.status} ${reply.text}`
            if (route.open) assert.strictEqual(reply.status, 200, what)
            else if (reaches(scope, route.name)) {
              // Allowed: answered by the route itself (a made-up delivery id is its 404).
              assert.isTrue(reply.status < 300 || route.name === "webhooks.resend", what)
              assert.notStrictEqual(reply.status, 403, what)
              assert.notStrictEqual(reply.status, 401, what)
            } else assert.isTrue(isErrorBody(reply, 403, "forbidden"), what)
          }
        }
        // Another workspace's webhook, with a manage token of workspace b: 404, never 403.
        const theirs = yield* call("/webhooks", { key: keys.a, json: webhookBody("https://receiver.example/a") })
        const tokenB = (yield* mint({ scope: "manage" }, keys.b)).body.token
        for (const route of routes.filter((r) => reaches("manage", r.name) && r.path.includes(":id"))) {
          const reply = yield* sendTo(route, tokenB, { webhook: theirs.body.id, token: "cst_unknown" })
          sent++
          assert.isTrue(isErrorBody(reply, 404, "not_found"), `${route.method} ${route.path}: ${reply.text}`)
        }
        assert.strictEqual((yield* call(`/webhooks/${theirs.body.id}`, { key: keys.a })).body.disabled ?? false, false)
        // Minting with a token is refused even with a body the route would take.
        const byToken = yield* call("/console/tokens", { key: tokenB, json: { scope: "read" } })
        assert.isTrue(isErrorBody(byToken, 403, "forbidden"), byToken.text)
        assert.isAtLeast(consoleTokenRequests() - metered, sent + 1)
      })
    )

    it.effect("say who they are; expired and revoked tokens are 401; revoking is per workspace", () =>
      Effect.gen(function* () {
        const short = (yield* mint({ ttlSeconds: 60, scope: "read", label: "Grace" })).body
        const identity = yield* call("/console/api/whoami", { key: short.token })
        assert.deepStrictEqual(identity.body, {
          auth: "console-token",
          scope: "read",
          label: "Grace",
          expiresAt: short.expiresAt
        })
        assert.deepStrictEqual((yield* call("/console/api/whoami", { key: keys.a })).body, {
          auth: "api-key",
          scope: "manage",
          label: null,
          expiresAt: null
        })
        const long = (yield* mint({ ttlSeconds: 604800 })).body
        yield* clock.adjust("61 seconds")
        const expired = yield* call("/webhooks", { key: short.token })
        assert.isTrue(isErrorBody(expired, 401, "unauthorized"), expired.text)
        assert.notInclude(expired.text, short.token)
        // Expired ones are no longer listed; a bad body with an expired token is 401 too.
        assert.notInclude((yield* call("/console/tokens", { key: keys.a })).text, short.id)
        const expiredPost = yield* call("/webhooks", { key: short.token, body: "{not json" })
        assert.strictEqual(expiredPost.status, 401)

        assert.strictEqual((yield* call("/webhooks", { key: long.token })).status, 200)
        const elsewhere = yield* call(`/console/tokens/${long.id}`, { method: "DELETE", key: keys.b })
        assert.isTrue(isErrorBody(elsewhere, 404, "not_found"), elsewhere.text)
        assert.strictEqual((yield* call("/webhooks", { key: long.token })).status, 200)
        const revoked = yield* call(`/console/tokens/${long.id}`, { method: "DELETE", key: keys.a })
        assert.strictEqual(revoked.status, 204)
        assert.isTrue(isErrorBody(yield* call("/webhooks", { key: long.token }), 401, "unauthorized"))
        assert.strictEqual((yield* call(`/console/tokens/${long.id}`, { method: "DELETE", key: keys.a })).status, 404)
        // A made-up token of the right form, and a key's form, are refused alike.
        const madeUp = `wbc_${"0".repeat(26)}_${"A".repeat(43)}`
        assert.strictEqual((yield* call("/webhooks", { key: madeUp })).status, 401)
      })
    )

    it.effect("two Authorization headers are 401 with a token too", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const token = (yield* mint({ scope: "manage" })).body.token
        for (const [method, body] of [
          ["GET", undefined],
          ["POST", JSON.stringify(webhookBody("https://receiver.example/twice"))]
        ] as const) {
          const twice = yield* Effect.promise(() =>
            withHeaderLines(`${base}/webhooks`, method, [`Bearer ${token}`, `Bearer ${token}`], body)
          )
          assert.strictEqual(twice.status, 401, `${method} ${twice.text}`)
          const mixed = yield* Effect.promise(() =>
            withHeaderLines(`${base}/webhooks`, method, [`Bearer ${token}`, `Bearer ${keys.a}`], body)
          )
          assert.strictEqual(mixed.status, 401, `${method} ${mixed.text}`)
        }
      })
    )
  },
  {},
  { clock }
)
