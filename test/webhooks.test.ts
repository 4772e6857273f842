import { createHmac } from "node:crypto"
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { call, forEachServer, isErrorBody, keys, type Reply } from "./harness.js"
import { eventually, type Received, receiver } from "./receivers.js"

const hmacSecret = "e2e-hmac-secret-0123456789"
const password = "e2e-basic-password-xyz"
const token = "e2e-bearer-token-abcdef"
const secrets = [hmacSecret, password, token]

// Every response of this suite is kept, to check that no secret ever comes back.
const replies: Array<Reply> = []
const api = (path: string, options: Parameters<typeof call>[1] = {}) =>
  Effect.tap(call(path, { key: keys.a, ...options }), (reply) => Effect.sync(() => replies.push(reply)))

const register = (url: string, auth: unknown, extra: Record<string, unknown> = {}, key: string = keys.a) =>
  api("/webhooks", { key, json: { url, events: ["tour-created", "tour-action-created"], auth, ...extra } })

const publish = (payload: unknown, type = "tour-created", key: string = keys.a) =>
  api("/events", { key, json: { type, payload } })

const tour = (id: string, extra: Record<string, unknown> = {}) => ({
  tour: { id, status: "planned", substatus: null, properties: {}, ...extra }
})

const verifyHmac = (request: Received) => {
  const timestamp = String(request.headers["x-signature-timestamp"])
  const expected = createHmac("sha256", hmacSecret).update(`${timestamp}.${request.body}`, "utf8").digest("hex")
  return request.headers["x-signature"] === expected && request.headers["x-signature-algorithm"] === "hmac-sha256"
}

forEachServer(
  "webhooks over HTTP",
  (it) => {
    it.scoped("each auth mode sends its exact headers and the fixed envelope", () =>
      Effect.gen(function* () {
        const target = yield* receiver()
        const hmac = (yield* register(`${target.url}/hmac`, { type: "hmac", secret: hmacSecret })).body
        const basic = (yield* register(`${target.url}/basic`, { type: "basic", username: "ops", password })).body
        const bearer = (yield* register(`${target.url}/bearer`, { type: "bearer", token })).body
        for (const webhook of [hmac, basic, bearer]) assert.match(webhook.id, /^whk_/)
        assert.deepStrictEqual(hmac.auth, { type: "hmac", secret: "********", scheme: "waybill" })
        assert.deepStrictEqual(basic.auth, { type: "basic", username: "ops", password: "********" })
        assert.deepStrictEqual(bearer.auth, { type: "bearer", token: "********" })
        const published = yield* publish(tour("tour_auth"))
        assert.strictEqual(published.status, 202, published.text)
        const eventId = published.body.id as string
        yield* eventually(
          Effect.sync(() => target.for(eventId).length === 3),
          "three deliveries"
        )
        const byPath = Object.fromEntries(target.for(eventId).map((request) => [request.path, request]))
        for (const request of Object.values(byPath)) {
          assert.strictEqual(request.headers["content-type"], "application/json")
          assert.match(String(request.headers["x-delivery-id"]), /^dlv_/)
          assert.strictEqual(request.headers["x-event-id"], eventId)
          assert.strictEqual(request.headers["x-event-type"], "tour-created")
          assert.strictEqual(request.headers["x-delivery-attempt"], "1")
          const body = JSON.parse(request.body)
          assert.deepStrictEqual(Object.keys(body), ["id", "type", "createdAt", "payload"])
          assert.deepStrictEqual(body.payload, tour("tour_auth"))
        }
        assert.strictEqual(
          byPath["/basic"]!.headers.authorization,
          `Basic ${Buffer.from(`ops:${password}`).toString("base64")}`
        )
        assert.strictEqual(byPath["/bearer"]!.headers.authorization, `Bearer ${token}`)
        assert.isUndefined(byPath["/hmac"]!.headers.authorization)
        assert.isTrue(verifyHmac(byPath["/hmac"]!))
        assert.strictEqual(byPath["/hmac"]!.body, byPath["/basic"]!.body, "one body for every webhook")
        const listed = yield* api("/webhooks?limit=100")
        assert.isTrue(listed.body.data.length >= 3)
        assert.deepStrictEqual((yield* api(`/webhooks/${basic.id}`)).body.auth.password, "********")
      })
    )

    it.scoped("500 then 200: two requests, one delivery id, both signatures valid", () =>
      Effect.gen(function* () {
        const target = yield* receiver((_, index) => ({ status: index === 0 ? 500 : 200 }))
        const webhook = (yield* register(target.url, { type: "hmac", secret: hmacSecret })).body
        const eventId = (yield* publish(tour("tour_retry"))).body.id as string
        yield* eventually(
          Effect.sync(() => target.for(eventId).length === 2),
          "the retry"
        )
        const [first, second] = target.for(eventId)
        assert.strictEqual(first!.headers["x-delivery-id"], second!.headers["x-delivery-id"])
        assert.deepStrictEqual(
          [first!.headers["x-delivery-attempt"], second!.headers["x-delivery-attempt"]],
          ["1", "2"]
        )
        assert.strictEqual(first!.body, second!.body)
        assert.isTrue(verifyHmac(first!) && verifyHmac(second!))
        yield* eventually(
          Effect.map(api(`/webhooks/${webhook.id}/deliveries`), (reply) => reply.body.data[0]?.status === "succeeded"),
          "the log says succeeded"
        )
        const log = (yield* api(`/webhooks/${webhook.id}/deliveries`)).body.data[0]
        assert.deepStrictEqual(
          log.attempts.map((attempt: { statusCode: number }) => attempt.statusCode),
          [500, 200]
        )
        assert.deepStrictEqual(
          log.attempts.map((attempt: { error: string | null }) => attempt.error),
          ["http", null]
        )
      })
    )

    it.scoped("500 twice: failed, and an alert listed by GET /alerts", () =>
      Effect.gen(function* () {
        const target = yield* receiver(() => ({ status: 500 }))
        const webhook = (yield* register(target.url, { type: "bearer", token })).body
        const eventId = (yield* publish(tour("tour_fail"))).body.id as string
        yield* eventually(
          Effect.map(api(`/alerts?webhookId=${webhook.id}`), (reply) => reply.body.data.length === 1),
          "the alert"
        )
        assert.strictEqual(target.for(eventId).length, 2)
        const alert = (yield* api(`/alerts?webhookId=${webhook.id}`)).body.data[0]
        assert.deepStrictEqual([alert.webhookId, alert.eventId, alert.eventType], [webhook.id, eventId, "tour-created"])
        const log = (yield* api(`/webhooks/${webhook.id}/deliveries`)).body.data[0]
        assert.strictEqual(log.status, "failed")
        assert.strictEqual(alert.deliveryId, log.id)
        assert.deepStrictEqual((yield* call(`/alerts?webhookId=${webhook.id}`, { key: keys.b })).body.data, [])
      })
    )

    it.scoped(
      "a receiver slower than the timeout and a redirect are failures; redirects are not followed",
      () =>
        Effect.gen(function* () {
          const slow = yield* receiver(() => ({ status: 200, delayMs: 3_000 }))
          const elsewhere = yield* receiver()
          const redirect = yield* receiver(() => ({ status: 302, headers: { location: `${elsewhere.url}/landing` } }))
          const slowHook = (yield* register(slow.url, { type: "hmac", secret: hmacSecret })).body
          const redirectHook = (yield* register(redirect.url, { type: "hmac", secret: hmacSecret })).body
          const eventId = (yield* publish(tour("tour_slow"))).body.id as string
          const logOf = (id: string) => Effect.map(api(`/webhooks/${id}/deliveries`), (reply) => reply.body.data[0])
          yield* eventually(
            Effect.map(logOf(slowHook.id), (log) => log?.status === "failed"),
            "the timeout",
            30_000
          )
          yield* eventually(
            Effect.map(logOf(redirectHook.id), (log) => log?.status === "failed"),
            "the redirect",
            30_000
          )
          const slowLog = yield* logOf(slowHook.id)
          assert.deepStrictEqual(
            slowLog.attempts.map((attempt: { statusCode: number | null; error: string }) => [
              attempt.statusCode,
              attempt.error
            ]),
            [
              [null, "timeout"],
              [null, "timeout"]
            ]
          )
          const redirectLog = yield* logOf(redirectHook.id)
          assert.deepStrictEqual(
            redirectLog.attempts.map((attempt: { statusCode: number | null; error: string }) => [
              attempt.statusCode,
              attempt.error
            ]),
            [
              [302, "http"],
              [302, "http"]
            ]
          )
          assert.strictEqual(elsewhere.received.length, 0)
          assert.strictEqual(redirect.for(eventId).length, 2)
        }),
      { timeout: 60_000 }
    )

    it.scoped("filters decide exactly who receives what (negated text on a missing field, Berlin days)", () =>
      Effect.gen(function* () {
        const target = yield* receiver()
        const filtered = (path: string, filter: unknown) =>
          register(
            `${target.url}${path}`,
            { type: "hmac", secret: hmacSecret },
            { events: ["tour-created"], filters: { "tour-created": filter } }
          )
        const notCustomer = yield* filtered("/not-customer", {
          conditions: [{ field: "tour.properties.prop_customer_ref", operator: "not_begins_with", value: "ACME" }]
        })
        assert.strictEqual(notCustomer.status, 201, notCustomer.text)
        yield* filtered("/due-new-year", {
          conditions: [{ field: "tour.properties.prop_due", operator: "on", value: "2027-01-01" }]
        })
        yield* filtered("/north-or-heavy", {
          match: "any",
          conditions: [
            { field: "tour.properties.prop_region", operator: "is", value: "opt_north" },
            { field: "tour.properties.prop_weight", operator: "gt", value: 1000 }
          ]
        })
        const plain = (yield* publish(tour("tour_f1"))).body.id as string
        const acme = (yield* publish(
          tour("tour_f2", { properties: { prop_customer_ref: "ACME-7", prop_weight: 1500 } })
        )).body.id as string
        // 2026-12-31T23:30:00Z is 00:30 on 1 January in Berlin.
        const newYear = (yield* publish(
          tour("tour_f3", { properties: { prop_due: 1798759800, prop_region: "opt_north" } })
        )).body.id as string
        const utcDay = (yield* publish(tour("tour_f4", { properties: { prop_due: 1798757000 } }))).body.id as string
        yield* eventually(
          Effect.sync(() => target.for(utcDay).length >= 1 && target.for(newYear).length >= 3),
          "deliveries"
        )
        yield* Effect.sleep("500 millis")
        const paths = (eventId: string) =>
          target
            .for(eventId)
            .map((request) => request.path)
            .sort()
        assert.deepStrictEqual(paths(plain), ["/not-customer"])
        assert.deepStrictEqual(paths(acme), ["/north-or-heavy"])
        assert.deepStrictEqual(paths(newYear), ["/due-new-year", "/north-or-heavy", "/not-customer"])
        assert.deepStrictEqual(paths(utcDay), ["/not-customer"])
        const fields = yield* api("/webhooks/filter-fields?event=tour-created")
        assert.isTrue(fields.body.data.some((field: { path: string }) => field.path === "tour.properties.prop_region"))
        assert.isTrue(isErrorBody(yield* api("/webhooks/filter-fields?event=nope"), 400, "bad_request"))
      })
    )

    it.scoped("webhooks and their deliveries belong to one workspace", () =>
      Effect.gen(function* () {
        const target = yield* receiver()
        const mine = (yield* register(`${target.url}/a`, { type: "hmac", secret: hmacSecret })).body
        yield* register(`${target.url}/b`, { type: "hmac", secret: hmacSecret }, {}, keys.b)
        const eventId = (yield* publish(tour("tour_ws"))).body.id as string
        yield* eventually(
          Effect.sync(() => target.for(eventId).length >= 1),
          "delivery to a"
        )
        yield* Effect.sleep("500 millis")
        assert.deepStrictEqual(
          target.for(eventId).map((request) => request.path),
          ["/a"]
        )
        for (const path of [`/webhooks/${mine.id}`, `/webhooks/${mine.id}/deliveries`]) {
          assert.isTrue(isErrorBody(yield* call(path, { key: keys.b }), 404, "not_found"))
        }
        assert.isTrue(
          isErrorBody(yield* call(`/webhooks/${mine.id}`, { key: keys.b, method: "DELETE" }), 404, "not_found")
        )
        assert.isFalse(
          (yield* call("/webhooks?limit=100", { key: keys.b })).body.data.some((w: { id: string }) => w.id === mine.id)
        )
        assert.strictEqual((yield* api(`/webhooks/${mine.id}`, { method: "DELETE" })).status, 204)
        assert.isTrue(isErrorBody(yield* api(`/webhooks/${mine.id}`), 404, "not_found"))
      })
    )

    it.effect("bad registrations and events get every problem in one 400, secrets never echoed", () =>
      Effect.gen(function* () {
        const bad = yield* register(
          "ftp://example.org",
          { type: "hmac", secret: "short" },
          {
            events: ["tour-created", "tour-created", "no-such-event"],
            filters: { "order-created": { conditions: [] } }
          }
        )
        assert.isTrue(isErrorBody(bad, 400, "bad_request"), bad.text)
        const paths = bad.body.issues.map((issue: { path: string }) => issue.path)
        assert.includeMembers(paths, ["url", "auth.secret"])
        assert.isTrue(paths.some((path: string) => path.startsWith("events")))
        assert.isTrue(paths.some((path: string) => path.startsWith("filters")))
        assert.isFalse(bad.text.includes('short"'))
        const unknown = yield* publish({}, "no-such-event")
        assert.isTrue(isErrorBody(unknown, 400, "bad_request"))
        const invalid = yield* publish({ tour: { status: 5 } })
        assert.isTrue(isErrorBody(invalid, 400, "bad_request"))
        assert.isTrue(invalid.body.issues.every((issue: { path: string }) => issue.path.startsWith("payload")))
      })
    )

    it.effect("a list's bad query gets every problem in one 400, like every other request", () =>
      Effect.gen(function* () {
        const webhook = yield* register("https://example.org/lists", { type: "hmac", secret: hmacSecret })
        for (const [path, paths] of [
          ["/webhooks?limit=abc&cursor=a&cursor=b", ["limit", "cursor"]],
          [`/webhooks/${webhook.body.id}/deliveries?limit=abc&cursor=a&cursor=b`, ["limit", "cursor"]],
          ["/alerts?webhookId=a&webhookId=b&limit=abc&cursor=a&cursor=b", ["webhookId", "limit", "cursor"]]
        ] as const) {
          const reply = yield* api(path)
          assert.isTrue(isErrorBody(reply, 400, "bad_request"), `${path}: ${reply.text}`)
          assert.deepStrictEqual(
            reply.body.issues.map((issue: { path: string }) => issue.path),
            paths,
            path
          )
        }
        assert.strictEqual((yield* api(`/webhooks/${webhook.body.id}`, { method: "DELETE" })).status, 204)
      })
    )

    it.effect("an unknown event type gets the closest catalogue names, wherever a type is checked", () =>
      Effect.gen(function* () {
        const hint = "is not a catalogue event type; did you mean transport-drafts-created?"
        const published = yield* publish({}, "transport-draft-created")
        assert.isTrue(isErrorBody(published, 400, "bad_request"), published.text)
        assert.deepStrictEqual(published.body.issues, [{ path: "type", message: hint }])
        const registered = yield* register(
          "https://hooks.example.org/x",
          { type: "hmac", secret: hmacSecret },
          { events: ["tour-created", "transport-draft-created"], filters: { Tour_Created: { conditions: [] } } }
        )
        assert.isTrue(isErrorBody(registered, 400, "bad_request"), registered.text)
        assert.deepStrictEqual(registered.body.issues, [
          { path: "events.1", message: hint },
          { path: "filters.Tour_Created", message: "is not a catalogue event type; did you mean tour-created?" }
        ])
        const fields = yield* api("/webhooks/filter-fields?event=transport-draft-created")
        assert.isTrue(isErrorBody(fields, 400, "bad_request"), fields.text)
        assert.deepStrictEqual(fields.body.issues, [{ path: "event", message: hint }])
        // Nothing close: the plain message.
        const far = yield* publish({}, "zzz")
        assert.deepStrictEqual(far.body.issues, [{ path: "type", message: "is not a catalogue event type" }])
      })
    )

    it.effect("no response of this suite ever contained a secret", () =>
      Effect.sync(() => {
        assert.isTrue(replies.length > 20)
        for (const reply of replies) {
          for (const secret of secrets)
            assert.isFalse(reply.text.includes(secret), `a response leaked a secret: ${reply.text}`)
        }
      })
    )
  },
  { deliveryTimeoutMs: 1_000, retryDelayMs: 300 }
)

forEachServer(
  "webhook targets when private targets are not allowed",
  (it) => {
    it.effect("http:// and private, loopback, link-local and metadata addresses are refused at url", () =>
      Effect.gen(function* () {
        for (const url of [
          "http://example.org/hook",
          "https://127.0.0.1/hook",
          "https://10.1.2.3/hook",
          "https://169.254.169.254/latest",
          "https://[::1]/hook",
          "https://[::ffff:192.168.0.1]/hook"
        ]) {
          const reply = yield* call("/webhooks", {
            key: keys.a,
            json: { url, events: ["tour-created"], auth: { type: "hmac", secret: hmacSecret } }
          })
          assert.isTrue(isErrorBody(reply, 400, "bad_request"), `${url}: ${reply.text}`)
          assert.deepStrictEqual(
            reply.body.issues.map((issue: { path: string }) => issue.path),
            ["url"],
            url
          )
        }
      })
    )
  },
  { allowPrivateTargets: false }
)
