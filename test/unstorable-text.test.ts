/**
 * Text PostgreSQL cannot store: JSON may spell a NUL (`\u0000`) or an unpaired surrogate
 * (`\ud800` alone), and a URL a NUL (`%00`). Every endpoint refuses them with 400 and the
 * contract's error body, each issue at its path (a parameter by name), and never a 5xx, on the
 * embedded database and on PostgreSQL. Paired surrogates (an emoji) are text like any other.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { contractMaster } from "./fixtures.js"
import { call, forEachServer, isErrorBody, keys, type Reply } from "./harness.js"

const NUL = "contains a NUL character (\\u0000), which cannot be stored"
const SURROGATE = "contains an unpaired surrogate (such as \\ud800 alone), which is not Unicode text"

const post = (path: string, body: string, method = "POST") =>
  call(path, { key: keys.a, method, body, headers: { "content-type": "application/json" } })

const refused = (reply: Reply, issues: ReadonlyArray<{ path: string; message: string }>) => {
  assert.isTrue(isErrorBody(reply, 400, "bad_request"), `${reply.status} ${reply.text.slice(0, 300)}`)
  assert.strictEqual(reply.body.message, "The request body holds text that cannot be stored")
  assert.deepStrictEqual(reply.body.issues, issues)
}

forEachServer("text that cannot be stored", (it) => {
  it.effect("POST /drafts: a NUL or an unpaired surrogate anywhere is a 400 at its path; nothing is stored", () =>
    Effect.gen(function* () {
      const base = '{"origin":"manual","status":"draft","transportShapeId":"shape_ftl"'
      refused(yield* post("/drafts", `${base},"name":"a \\u0000 b","transport":{}}`), [{ path: "name", message: NUL }])
      refused(yield* post("/drafts", `${base},"transport":{"stops":[{"note":"x \\ud800"}]}}`), [
        { path: "transport.stops.0.note", message: SURROGATE }
      ])
      refused(yield* post("/drafts", `${base},"transport":{"lone \\udc00":1,"ok":"\\udc00\\ud800"}}`), [
        { path: "transport", message: `has a key that ${SURROGATE}` },
        { path: "transport.ok", message: SURROGATE }
      ])
      const listed = yield* call("/drafts", { key: keys.a })
      assert.deepStrictEqual(listed.body.data, [])
      // A surrogate pair is one character (😀): stored and answered as sent.
      const emoji = yield* post("/drafts", `${base},"name":"tour \\ud83d\\ude00","transport":{}}`)
      assert.strictEqual(emoji.status, 201, emoji.text)
      assert.strictEqual(emoji.body.name, "tour 😀")
    })
  )

  it.effect("every other endpoint with a body refuses them too", () =>
    Effect.gen(function* () {
      const draft = yield* call("/drafts", { key: keys.a, json: contractMaster() })
      assert.strictEqual(draft.status, 201, draft.text)
      refused(yield* post(`/drafts/${draft.body.id}/actions`, '{"type":"activate-recurring","reason":"\\u0000"}'), [
        { path: "reason", message: NUL }
      ])
      refused(
        yield* post(
          "/webhooks",
          '{"url":"https://hooks.example.org/x","events":["tour-created"],"description":"\\ud800"}'
        ),
        [{ path: "description", message: SURROGATE }]
      )
      refused(
        yield* post(
          "/events",
          '{"type":"tour-created","payload":{"tour":{"id":"tour_1","status":"planned","properties":{"a":"\\u0000"}}}}'
        ),
        [{ path: "payload.tour.properties.a", message: NUL }]
      )
      const webhooks = yield* call("/webhooks", { key: keys.a })
      assert.deepStrictEqual(webhooks.body.data, [])
    })
  )

  it.effect("a NUL in the URL (%00) is a 400 that says where: the path, or the parameter by name", () =>
    Effect.gen(function* () {
      for (const [method, path] of [
        ["GET", "/drafts/drf_%00"],
        ["DELETE", "/drafts/drf_%00"],
        ["GET", "/webhooks/whk_%00"],
        ["GET", "/webhooks/whk_%00/deliveries"],
        ["DELETE", "/webhooks/whk_%00"],
        ["GET", "/tours/tour_%00"]
      ] as const) {
        const reply = yield* call(path, { key: keys.a, method })
        assert.isTrue(isErrorBody(reply, 400, "bad_request"), `${method} ${path}: ${reply.status} ${reply.text}`)
        assert.strictEqual(reply.body.message, "The request path contains %00 (a NUL character), which no path holds")
      }
      const action = yield* post("/drafts/drf_%00/actions", '{"type":"activate-recurring"}')
      assert.isTrue(isErrorBody(action, 400, "bad_request"), action.text)
      for (const [path, name] of [
        ["/drafts?after=%00", "after"],
        ["/tours?masterId=x%00y&limit=5", "masterId"],
        ["/webhooks/alerts?after=%00", "after"]
      ] as const) {
        const reply = yield* call(path, { key: keys.a })
        assert.isTrue(isErrorBody(reply, 400, "bad_request"), `${path}: ${reply.status} ${reply.text}`)
        assert.strictEqual(
          reply.body.message,
          `The query parameter "${name}" contains %00 (a NUL character), which no parameter holds`
        )
      }
      const ready = yield* call("/health/ready")
      assert.strictEqual(ready.status, 200)
    })
  )
})
