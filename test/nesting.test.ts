/**
 * Contract §1: request bodies nest at most 64 levels of objects and arrays. Every POST endpoint
 * answers a deeper body with 400 and the issue at the path where the limit is crossed, never
 * with a 5xx, however deep (up to what the 1 MiB limit lets through); 64 levels pass through
 * where the schema takes any JSON.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { contractMaster } from "./fixtures.js"
import { call, forEachServer, isErrorBody, keys, type Reply } from "./harness.js"

const LIMIT = 64
const DEPTHS = [LIMIT + 1, 5_000, 100_000]
const tooDeep = "nests deeper than 64 levels of objects and arrays"

/**
 * A JSON text of `containers` objects nested under key `x` (`{"x":{"x":1}}` for 2), written
 * as text: the test itself could not `JSON.stringify` the deepest.
 */
const chain = (containers: number) => `${'{"x":'.repeat(containers)}1${"}".repeat(containers)}`

/** Where one endpoint's body holds an arbitrary value, and how deep that value starts. */
interface Slot {
  readonly path: string
  /** The body around the value: `wrap(value)`. */
  readonly wrap: (value: string) => string
  /** The level of the value's own top container (the body itself is level 1). */
  readonly level: number
}

/** A body nesting `levels` levels in all, its deepest part in `slot`. */
const bodyOf = (slot: Slot, levels: number) => slot.wrap(chain(levels - slot.level + 1))

/** The path of the container at level 65, the first one past the limit. */
const crossedAt = (slot: Slot) => [slot.path, ...Array<string>(LIMIT + 1 - slot.level).fill("x")].join(".")

const post = (path: string, body: string) =>
  call(path, { key: keys.a, body, headers: { "content-type": "application/json" } })

const refusedAt = (reply: Reply, path: string) => {
  assert.isTrue(isErrorBody(reply, 400, "bad_request"), `${reply.status} ${reply.text.slice(0, 300)}`)
  assert.deepStrictEqual(reply.body.issues, [{ path, message: tooDeep }])
  assert.strictEqual(reply.body.message, "The request body nests deeper than 64 levels of objects and arrays")
}

const tourPayload = (value: string) =>
  `{"type":"tour-created","payload":{"tour":{"id":"tour_deep","status":"planned","substatus":null,"properties":{"deep":${value}}}}}`

forEachServer("request bodies nested deeper than 64 levels", (it) => {
  it.effect("every POST endpoint refuses 65, 5,000 and 100,000 levels at the path where the limit is crossed", () =>
    Effect.gen(function* () {
      const draft = yield* call("/drafts", { key: keys.a, json: contractMaster() })
      assert.strictEqual(draft.status, 201, draft.text)
      const endpoints: ReadonlyArray<readonly [string, Slot]> = [
        [
          "/drafts",
          {
            path: "transport",
            wrap: (value) => `{"origin":"manual","status":"draft","transportShapeId":"shape_ftl","transport":${value}}`,
            level: 2
          }
        ],
        [
          `/drafts/${draft.body.id}/actions`,
          { path: "reason", wrap: (value) => `{"type":"activate-recurring","reason":${value}}`, level: 2 }
        ],
        ["/products/prod_ftl/execute", { path: "draftId", wrap: (value) => `{"draftId":${value}}`, level: 2 }],
        [
          "/webhooks",
          {
            path: "filters.tour-created",
            wrap: (value) =>
              `{"url":"https://hooks.example.org/deep","events":["tour-created"],"auth":{"type":"hmac","secret":"0123456789abcdef0123"},"filters":{"tour-created":${value}}}`,
            level: 3
          }
        ],
        ["/events", { path: "payload.tour.properties.deep", wrap: tourPayload, level: 5 }]
      ]
      for (const [path, slot] of endpoints) {
        for (const levels of DEPTHS) {
          const body = bodyOf(slot, levels)
          assert.isBelow(body.length, 1024 * 1024)
          refusedAt(yield* post(path, body), crossedAt(slot))
        }
        // A body that is nothing but brackets: the issue's path is all array indexes.
        refusedAt(yield* post(path, `${"[".repeat(100_000)}${"]".repeat(100_000)}`), Array(LIMIT).fill("0").join("."))
      }
      // The server is still serving.
      assert.strictEqual((yield* call("/health")).status, 200)
    })
  )

  it.effect("64 levels pass: a draft's transport and an event's open property are kept as sent", () =>
    Effect.gen(function* () {
      const transport = chain(LIMIT - 1)
      const created = yield* post(
        "/drafts",
        `{"origin":"manual","status":"draft","transportShapeId":"shape_ftl","transport":${transport}}`
      )
      assert.strictEqual(created.status, 201, created.text)
      assert.deepStrictEqual(created.body.transport, JSON.parse(transport))
      const read = yield* call(`/drafts/${created.body.id}`, { key: keys.a })
      assert.deepStrictEqual(read.body.transport, JSON.parse(transport))

      const published = yield* post("/events", tourPayload(chain(LIMIT - 4)))
      assert.strictEqual(published.status, 202, published.text)
    })
  )

  it.effect("64 levels where the schema wants a scalar are an ordinary schema issue, not a 5xx", () =>
    Effect.gen(function* () {
      const draft = yield* call("/drafts", { key: keys.a, json: contractMaster() })
      const cases: ReadonlyArray<readonly [string, string, string]> = [
        [`/drafts/${draft.body.id}/actions`, `{"type":"activate-recurring","reason":${chain(LIMIT - 1)}}`, "reason"],
        ["/products/prod_ftl/execute", `{"draftId":${chain(LIMIT - 1)}}`, "draftId"],
        [
          "/webhooks",
          `{"url":"https://hooks.example.org/deep","events":["tour-created"],"auth":{"type":"hmac","secret":"0123456789abcdef0123"},"description":${chain(LIMIT - 1)}}`,
          "description"
        ]
      ]
      for (const [path, body, field] of cases) {
        const reply = yield* post(path, body)
        assert.isTrue(isErrorBody(reply, 400, "bad_request"), `${path}: ${reply.status} ${reply.text.slice(0, 300)}`)
        // (An action is a union: each member may report the field.)
        assert.deepStrictEqual(
          [...new Set(reply.body.issues.map((issue: { path: string }) => issue.path))],
          [field],
          path
        )
      }
    })
  )
})
