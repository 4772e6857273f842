/**
 * Delivery statistics over HTTP (contract §8, `GET /webhooks/{id}/stats`), on PGlite and
 * PostgreSQL: deliveries to a real receiver counted by status, with their latency and the hourly
 * buckets of the window; ten requests at once, each answered in full; 400 at `hours` for a bad
 * window; 404 for another workspace's webhook.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { call, forEachServer, isErrorBody, keys } from "./harness.js"
import { eventually, receiver } from "./receivers.js"

const api = (path: string, options: Parameters<typeof call>[1] = {}) => call(path, { key: keys.a, ...options })

const publish = (id: string) =>
  api("/events", {
    json: { type: "tour-created", payload: { tour: { id, status: "planned", substatus: null, properties: {} } } }
  })

forEachServer(
  "delivery statistics over HTTP",
  (it) => {
    it.scoped("counts succeeded and failed deliveries with their latency, in the last of 24 clock-hour buckets", () =>
      Effect.gen(function* () {
        // Tour "tour_bad" is refused on both attempts: failed.
        const target = yield* receiver((request) => ({ status: request.body.includes("tour_bad") ? 500 : 200 }))
        const webhook = (yield* api("/webhooks", {
          json: { url: target.url, events: ["tour-created"], auth: { type: "bearer", token: "stats-token" } }
        })).body
        const before = Math.floor(Date.now() / 1000)
        for (const id of ["tour_ok1", "tour_ok2", "tour_ok3", "tour_bad"]) yield* publish(id)
        const stats = () => Effect.map(api(`/webhooks/${webhook.id}/stats`), (reply) => reply.body)
        yield* eventually(
          Effect.map(stats(), (body) => body.succeeded === 3 && body.failed === 1),
          "three deliveries to succeed and one to fail"
        )
        const reply = yield* api(`/webhooks/${webhook.id}/stats`)
        assert.strictEqual(reply.status, 200)
        const body = reply.body
        assert.deepStrictEqual(Object.keys(body).sort(), [
          "buckets",
          "failed",
          "held",
          "latencyMs",
          "pending",
          "succeeded"
        ])
        assert.deepStrictEqual([body.pending, body.held], [0, 0])
        // The failed one waited for its retry (200 ms in tests): p95 covers it.
        assert.isAtLeast(body.latencyMs.p50, 0)
        assert.isAtLeast(body.latencyMs.p95, 200)
        assert.isAtMost(body.latencyMs.p50, body.latencyMs.p95)
        assert.strictEqual(body.buckets.length, 24)
        // Clock hours, the last one the current hour: the events' hour is the last one, or the one
        // before if the run crossed into a new hour meanwhile.
        const last = body.buckets.at(-1)
        const now = Math.floor(Date.now() / 1000)
        assert.strictEqual(last.start, Math.floor(now / 3_600) * 3_600)
        for (let i = 1; i < 24; i++) assert.strictEqual(body.buckets[i].start - body.buckets[i - 1].start, 3_600)
        const eventsHour = body.buckets.findIndex(
          (bucket: { start: number }) => bucket.start === Math.floor(before / 3_600) * 3_600
        )
        assert.isAtLeast(eventsHour, 22)
        assert.deepStrictEqual(
          body.buckets.map((bucket: { succeeded: number; failed: number }) => [bucket.succeeded, bucket.failed]),
          Array.from({ length: 24 }, (_, i) => (i === eventsHour ? [3, 1] : [0, 0]))
        )

        const week = (yield* api(`/webhooks/${webhook.id}/stats?hours=168`)).body
        assert.deepStrictEqual([week.succeeded, week.failed, week.buckets.length], [3, 1, 168])
        // Ten at once share one read and one encoding of its answer: each gets all of it, as JSON.
        const ten = yield* Effect.all(
          Array.from({ length: 10 }, () => api(`/webhooks/${webhook.id}/stats?hours=168`)),
          { concurrency: 10 }
        )
        for (const answer of ten) {
          assert.strictEqual(answer.status, 200)
          assert.strictEqual(answer.headers.get("content-type"), "application/json")
          assert.strictEqual(answer.text, ten[0]!.text)
        }
        assert.deepStrictEqual([ten[0]!.body.succeeded, ten[0]!.body.failed, ten[0]!.body.buckets.length], [3, 1, 168])
      })
    )

    it.scoped("refuses a bad window at hours; another workspace's or an unknown webhook is 404", () =>
      Effect.gen(function* () {
        const webhook = (yield* api("/webhooks", {
          json: {
            url: "https://hooks.example.org/stats",
            events: ["tour-created"],
            auth: { type: "bearer", token: "stats-token" }
          }
        })).body
        for (const hours of ["0", "169", "2.5", "abc", ""]) {
          const refused = yield* api(`/webhooks/${webhook.id}/stats?hours=${hours}`)
          assert.isTrue(isErrorBody(refused, 400, "bad_request"), `${hours}: ${refused.text}`)
          assert.deepStrictEqual(
            refused.body.issues.map((issue: { path: string }) => issue.path),
            ["hours"]
          )
        }
        assert.isTrue(isErrorBody(yield* call(`/webhooks/${webhook.id}/stats`, { key: keys.b }), 404, "not_found"))
        assert.isTrue(isErrorBody(yield* api("/webhooks/whk_unknown/stats"), 404, "not_found"))
        assert.isTrue(isErrorBody(yield* call(`/webhooks/${webhook.id}/stats`), 401, "unauthorized"))
      })
    )
  },
  {},
  { hosts: ["reference"] }
)
