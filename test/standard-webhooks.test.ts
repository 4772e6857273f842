/**
 * The Standard Webhooks scheme over HTTP (contract §5), on PGlite and PostgreSQL: deliveries
 * verify with the official `standardwebhooks` package (and fail there with another secret),
 * carry Waybill's own headers too, and the scheme is echoed, validated and kept by the console's
 * edit.
 */
import { randomBytes } from "node:crypto"
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { Webhook } from "standardwebhooks"
import { call, forEachServer, isErrorBody, keys } from "./harness.js"
import { eventually, type Received, receiver } from "./receivers.js"

const secret = `whsec_${randomBytes(32).toString("base64")}`

const api = (path: string, options: Parameters<typeof call>[1] = {}) => call(path, { key: keys.a, ...options })

const publish = (id: string) =>
  Effect.map(
    api("/events", {
      json: { type: "tour-created", payload: { tour: { id, status: "planned", substatus: null, properties: {} } } }
    }),
    (reply) => reply.body.id as string
  )

const headersOf = (request: Received): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") out[name] = value
  return out
}

forEachServer("Standard Webhooks signatures over HTTP", (it) => {
  it.scoped("deliveries verify with the official standardwebhooks library; another secret fails there", () =>
    Effect.gen(function* () {
      // The first attempt fails, so the retry's fresh signature is checked too.
      const target = yield* receiver((_, index) => ({ status: index === 0 ? 500 : 200 }))
      const created = yield* api("/webhooks", {
        json: {
          url: target.url,
          events: ["tour-created"],
          auth: { type: "hmac", secret, scheme: "standard-webhooks" }
        }
      })
      assert.strictEqual(created.status, 201, created.text)
      assert.deepStrictEqual(created.body.auth, { type: "hmac", secret: "********", scheme: "standard-webhooks" })
      assert.notInclude(created.text, secret.slice(6))
      assert.deepStrictEqual((yield* api(`/webhooks/${created.body.id}`)).body.auth, created.body.auth)

      const eventId = yield* publish("tour_standard")
      yield* eventually(
        Effect.sync(() => target.for(eventId).length === 2),
        "the attempt and its retry"
      )
      const official = new Webhook(secret)
      const stranger = new Webhook(`whsec_${randomBytes(32).toString("base64")}`)
      for (const [index, request] of target.for(eventId).entries()) {
        const headers = headersOf(request)
        assert.strictEqual(headers["webhook-id"], headers["x-delivery-id"])
        assert.match(headers["webhook-id"]!, /^dlv_/)
        assert.strictEqual(headers["x-event-id"], eventId)
        assert.strictEqual(headers["x-event-type"], "tour-created")
        assert.strictEqual(headers["x-delivery-attempt"], String(index + 1))
        assert.match(headers["webhook-signature"]!, /^v1,[A-Za-z0-9+/]+=*$/)
        assert.isUndefined(headers["x-signature"])
        assert.deepStrictEqual(official.verify(request.body, headers), JSON.parse(request.body))
        assert.throws(() => stranger.verify(request.body, headers), /signature/i)
        assert.throws(() => official.verify(`${request.body} `, headers), /signature/i)
      }
    })
  )

  it.scoped("a secret that is not whsec_ base64 of 24 to 64 bytes is a 400 at auth.secret", () =>
    Effect.gen(function* () {
      for (const bad of ["plain-secret-0123456789", `whsec_${randomBytes(16).toString("base64")}`, "whsec_!!!!"]) {
        const reply = yield* api("/webhooks", {
          json: {
            url: "http://127.0.0.1:9/hook",
            events: ["tour-created"],
            auth: { type: "hmac", secret: bad, scheme: "standard-webhooks" }
          }
        })
        assert.isTrue(isErrorBody(reply, 400, "bad_request"), reply.text)
        assert.deepStrictEqual(
          reply.body.issues.map((issue: { path: string }) => issue.path),
          ["auth.secret"]
        )
        assert.notInclude(reply.text, bad)
      }
      const unknownScheme = yield* api("/webhooks", {
        json: { url: "http://127.0.0.1:9/hook", events: ["tour-created"], auth: { type: "hmac", secret, scheme: "x" } }
      })
      assert.deepStrictEqual(
        unknownScheme.body.issues.map((issue: { path: string }) => issue.path),
        ["auth.scheme"]
      )
    })
  )

  it.scoped("the console's edit keeps the secret with the scheme, and checks it against a new scheme", () =>
    Effect.gen(function* () {
      const target = yield* receiver()
      const edit = (id: string, json: unknown) => api(`/console/api/webhooks/${id}`, { method: "PUT", json })
      const created = (yield* api("/webhooks", {
        json: { url: target.url, events: ["tour-created"], auth: { type: "hmac", secret, scheme: "standard-webhooks" } }
      })).body
      const kept = yield* edit(created.id, {
        url: `${target.url}/edited`,
        events: ["tour-created"],
        auth: { type: "hmac", scheme: "standard-webhooks" },
        description: "edited"
      })
      assert.strictEqual(kept.status, 200, kept.text)
      assert.deepStrictEqual(kept.body.auth, { type: "hmac", secret: "********", scheme: "standard-webhooks" })
      // An edit that does not mention the scheme keeps it (and the secret).
      const unmentioned = yield* edit(created.id, {
        url: `${target.url}/edited`,
        events: ["tour-created"],
        auth: { type: "hmac" },
        description: "edited again"
      })
      assert.strictEqual(unmentioned.status, 200, unmentioned.text)
      assert.deepStrictEqual(unmentioned.body.auth, { type: "hmac", secret: "********", scheme: "standard-webhooks" })
      const eventId = yield* publish("tour_edited")
      yield* eventually(
        Effect.sync(() => target.for(eventId).length === 1),
        "a delivery after the edit"
      )
      const [request] = target.for(eventId)
      assert.strictEqual(request!.path, "/edited")
      assert.doesNotThrow(() => new Webhook(secret).verify(request!.body, headersOf(request!)))

      // A webhook signing the Waybill way cannot keep a plain secret under the new scheme.
      const plain = (yield* api("/webhooks", {
        json: { url: target.url, events: ["tour-created"], auth: { type: "hmac", secret: "plain-secret-0123456789" } }
      })).body
      assert.deepStrictEqual(plain.auth, { type: "hmac", secret: "********", scheme: "waybill" })
      const refused = yield* edit(plain.id, {
        url: target.url,
        events: ["tour-created"],
        auth: { type: "hmac", secret: "********", scheme: "standard-webhooks" }
      })
      assert.isTrue(isErrorBody(refused, 400, "bad_request"), refused.text)
      assert.deepStrictEqual(
        refused.body.issues.map((issue: { path: string }) => issue.path),
        ["auth.secret"]
      )
      assert.notInclude(refused.text, "plain-secret-0123456789")
    })
  )
})
