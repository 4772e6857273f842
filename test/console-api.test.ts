/**
 * The console's edit route over HTTP (contract §5): `PUT /console/api/webhooks/{id}` keeps a
 * secret that is not retyped, asks for the secret of a changed auth type, answers 404 for another
 * workspace's webhook, and stays out of `/openapi.json`.
 */
import { assert } from "@effect/vitest"
import * as Hmac from "@waybill/signing/Hmac"
import { Effect, Either } from "effect"
import { call, forEachServer, isErrorBody, keys } from "./harness.js"
import { eventually, receiver } from "./receivers.js"

const secret = "console-edit-secret-0001"

const edit = (id: string, json: unknown, key: string = keys.a) =>
  call(`/console/api/webhooks/${id}`, { method: "PUT", key, json })

forEachServer("console edit route", (it) => {
  it.effect("an edit without the secret keeps it: the next delivery goes to the new URL, signed with it", () =>
    Effect.gen(function* () {
      const target = yield* receiver()
      const created = yield* call("/webhooks", {
        key: keys.a,
        json: { url: target.url, events: ["tour-created"], auth: { type: "hmac", secret }, description: "before" }
      })
      assert.strictEqual(created.status, 201, created.text)
      const id = created.body.id
      const edited = yield* edit(id, {
        url: `${target.url}/edited`,
        events: ["tour-created"],
        auth: { type: "hmac", secret: "********" },
        description: "after"
      })
      assert.strictEqual(edited.status, 200, edited.text)
      assert.deepStrictEqual(edited.body, {
        ...created.body,
        url: `${target.url}/edited`,
        description: "after"
      })
      assert.deepStrictEqual((yield* call(`/webhooks/${id}`, { key: keys.a })).body, edited.body)
      assert.notInclude(edited.text, secret)

      const published = yield* call("/events", {
        key: keys.a,
        json: {
          type: "tour-created",
          payload: { tour: { id: "tour_edit", status: "planned", substatus: null, properties: {} } }
        }
      })
      assert.strictEqual(published.status, 202)
      yield* eventually(
        Effect.sync(() => target.for(published.body.id).length === 1),
        "the delivery after the edit"
      )
      const [delivered] = target.for(published.body.id)
      assert.strictEqual(delivered!.path, "/edited")
      const verified = Hmac.verify({
        secret,
        headers: delivered!.headers as Record<string, string>,
        rawBody: delivered!.body,
        now: Number(delivered!.headers["x-signature-timestamp"])
      })
      assert.isTrue(Either.isRight(verified))
    }).pipe(Effect.scoped)
  )

  it.effect(
    "a changed auth type needs its secret; bad input gets every issue; no key is 401; another workspace's webhook is 404",
    () =>
      Effect.gen(function* () {
        const created = yield* call("/webhooks", {
          key: keys.a,
          json: { url: "https://hooks.example.org/edit", events: ["tour-created"], auth: { type: "hmac", secret } }
        })
        const id = created.body.id
        const body = { url: "https://hooks.example.org/edit", events: ["tour-created"] }
        for (const auth of [{ type: "bearer" }, { type: "bearer", token: "********" }]) {
          const refused = yield* edit(id, { ...body, auth })
          assert.isTrue(isErrorBody(refused, 400, "bad_request"), refused.text)
          assert.deepStrictEqual(
            refused.body.issues.map((issue: { path: string }) => issue.path),
            ["auth.token"]
          )
        }
        const bad = yield* edit(id, { url: "ftp://x", events: [], auth: { type: "hmac" } })
        assert.isTrue(isErrorBody(bad, 400, "bad_request"))
        assert.includeMembers(
          bad.body.issues.map((issue: { path: string }) => issue.path),
          ["url", "events"]
        )
        const anonymous = yield* call(`/console/api/webhooks/${id}`, {
          method: "PUT",
          json: { ...body, auth: { type: "hmac" } }
        })
        assert.isTrue(isErrorBody(anonymous, 401, "unauthorized"))
        assert.isTrue(isErrorBody(yield* edit(id, { ...body, auth: { type: "hmac" } }, keys.b), 404, "not_found"))
        assert.isTrue(isErrorBody(yield* edit("whk_unknown", { ...body, auth: { type: "hmac" } }), 404, "not_found"))
        const unchanged = yield* call(`/webhooks/${id}`, { key: keys.a })
        assert.deepStrictEqual(unchanged.body, created.body)
        const paths = Object.keys((yield* call("/openapi.json")).body.paths)
        assert.isFalse(
          // The console's own routes; minting console tokens (/console/tokens) is public API.
          paths.some((path) => path.startsWith("/console/api")),
          paths.join(", ")
        )
      })
  )
})
