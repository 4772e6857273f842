/**
 * `Idempotency-Key` over HTTP (contract §8), on PGlite and PostgreSQL: a replay of each of the
 * three routes answers the same status and body with `Idempotent-Replayed: true` and creates
 * nothing (one draft, one webhook, one event, one delivery per event); another body or route is
 * 422; keys belong to their workspace; a 4xx keeps nothing.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { call, forEachServer, isErrorBody, keys, type Reply } from "./harness.js"
import { eventually, receiver } from "./receivers.js"

const post = (path: string, json: unknown, key: string | undefined, apiKey: string = keys.a) =>
  call(path, {
    key: apiKey,
    json,
    ...(key === undefined ? {} : { headers: { "idempotency-key": key } })
  })

const replays = (first: Reply, again: Reply) => {
  assert.strictEqual(again.status, first.status)
  assert.strictEqual(again.text, first.text)
  assert.isNull(first.headers.get("idempotent-replayed"))
  assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
}

const tourEvent = (id: string) => ({
  type: "tour-created",
  payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
})

const draft = (name: string) => ({ origin: "manual", status: "draft", transportShapeId: "shape_line", name })

forEachServer("Idempotency-Key over HTTP", (it) => {
  it.scoped("POST /events and POST /drafts: replays change nothing, one delivery per event", () =>
    Effect.gen(function* () {
      const target = yield* receiver()
      const hook = yield* post(
        "/webhooks",
        { url: target.url, events: ["tour-created", "transport-drafts-created"], auth: { type: "bearer", token: "t" } },
        undefined
      )
      assert.strictEqual(hook.status, 201)
      yield* Effect.addFinalizer(() =>
        Effect.asVoid(call(`/webhooks/${hook.body.id}`, { key: keys.a, method: "DELETE" }))
      )

      const first = yield* post("/events", tourEvent("tour_idem_e2e"), "e2e-event-1")
      assert.strictEqual(first.status, 202, first.text)
      // The same JSON value, spaced and ordered differently, sent twice more.
      const respaced = yield* call("/events", {
        key: keys.a,
        body: JSON.stringify({ payload: tourEvent("tour_idem_e2e").payload, type: "tour-created" }, null, 3),
        headers: { "content-type": "application/json", "idempotency-key": "e2e-event-1" }
      })
      replays(first, respaced)
      replays(first, yield* post("/events", tourEvent("tour_idem_e2e"), "e2e-event-1"))

      const created = yield* post("/drafts", draft("Idempotent line"), "e2e-draft-1")
      assert.strictEqual(created.status, 201, created.text)
      replays(created, yield* post("/drafts", draft("Idempotent line"), "e2e-draft-1"))
      const listed = (yield* call("/drafts?limit=100", { key: keys.a })).body.data as Array<{ name: string | null }>
      assert.strictEqual(listed.filter((item) => item.name === "Idempotent line").length, 1)

      // One delivery of the event and one of the draft's event, and nothing more.
      yield* eventually(
        Effect.sync(() => target.for(first.body.id).length === 1),
        "the event's delivery"
      )
      yield* eventually(
        Effect.sync(() => target.received.some((request) => request.body.includes(created.body.id))),
        "the draft's event"
      )
      yield* Effect.sleep("500 millis")
      assert.strictEqual(target.for(first.body.id).length, 1)
      assert.strictEqual(target.received.filter((request) => request.body.includes("tour_idem_e2e")).length, 1)
      assert.strictEqual(target.received.filter((request) => request.body.includes(created.body.id)).length, 1)
    })
  )

  it.scoped("POST /webhooks: a replay registers nothing and never shows the secret", () =>
    Effect.gen(function* () {
      const body = {
        url: "http://127.0.0.1:9/idempotent",
        events: ["tour-deleted"],
        auth: { type: "hmac", secret: "e2e-idempotent-secret-01" }
      }
      const first = yield* post("/webhooks", body, "e2e-webhook-1")
      assert.strictEqual(first.status, 201, first.text)
      yield* Effect.addFinalizer(() =>
        Effect.asVoid(call(`/webhooks/${first.body.id}`, { key: keys.a, method: "DELETE" }))
      )
      const again = yield* post("/webhooks", body, "e2e-webhook-1")
      replays(first, again)
      assert.notInclude(again.text, "e2e-idempotent-secret-01")
      const listed = (yield* call("/webhooks?limit=100", { key: keys.a })).body.data as Array<{ url: string }>
      assert.strictEqual(listed.filter((item) => item.url === body.url).length, 1)
    })
  )

  it.effect("another body or route is 422; keys belong to their workspace; a 4xx keeps nothing", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* post("/events", tourEvent("tour_reuse"), "e2e-reuse")).status, 202)
      const otherBody = yield* post("/events", tourEvent("tour_reuse_other"), "e2e-reuse")
      assert.isTrue(isErrorBody(otherBody, 422, "idempotency_key_reused"), otherBody.text)
      const otherRoute = yield* post("/drafts", draft("Reuse"), "e2e-reuse")
      assert.isTrue(isErrorBody(otherRoute, 422, "idempotency_key_reused"), otherRoute.text)

      const inB = yield* post("/events", tourEvent("tour_reuse"), "e2e-reuse", keys.b)
      assert.strictEqual(inB.status, 202)
      assert.isNull(inB.headers.get("idempotent-replayed"))

      const refused = yield* post("/drafts", { origin: "manual", status: "draft" }, "e2e-fix")
      assert.isTrue(isErrorBody(refused, 400, "bad_request"), refused.text)
      const fixed = yield* post("/drafts", draft("Fixed"), "e2e-fix")
      assert.strictEqual(fixed.status, 201, fixed.text)
      assert.isNull(fixed.headers.get("idempotent-replayed"))

      const badKey = yield* post("/events", tourEvent("tour_bad_key"), "two words")
      assert.isTrue(isErrorBody(badKey, 400, "bad_request"), badKey.text)
      assert.deepStrictEqual(
        badKey.body.issues.map((issue: { path: string }) => issue.path),
        ["Idempotency-Key"]
      )
      const noKey = yield* call("/events", { json: tourEvent("tour_no_auth"), headers: { "idempotency-key": "k" } })
      assert.isTrue(isErrorBody(noKey, 401, "unauthorized"), noKey.text)
    })
  )
})
