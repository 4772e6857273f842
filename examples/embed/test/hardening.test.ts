/**
 * The contract's request rules (§1) hold where an embedder mounts the web handler, not only in the
 * reference server: Express 5 (through `@hono/node-server`'s adapter) and Hono, over real HTTP.
 * 401 before the body and two `Authorization` headers, reserved keys, non-finite numbers, invalid
 * UTF-8 and other charsets; and the webhook limit set through `Waybill.make`'s variables.
 */
import { request as nodeRequest } from "node:http"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Express from "../src/express.js"
import * as Hono from "../src/hono.js"
import type { Running } from "../src/Main.js"
import { startOnMigratedDatabase } from "./started.js"

const key = "embed-hardening-key-0001"
const env = { WAYBILL_API_KEYS: `acme:${key}`, WAYBILL_MAX_WEBHOOKS_PER_WORKSPACE: "2" }

const RESERVED = "is a reserved key: __proto__, constructor and prototype are refused anywhere in a body"
const NOT_FINITE = "is a number beyond the range of a double (±1.8e308), which would be changed to null"

const event = (id: string) =>
  `{"type":"tour-created","payload":{"tour":{"id":"${id}","status":"planned","substatus":null,"properties":{}}}}`

/** A request with repeated headers, one line each, as Node's client sends them. */
const withHeaderLines = (url: string, method: string, authorization: ReadonlyArray<string>, body?: string) =>
  new Promise<number>((resolve, reject) => {
    const request = nodeRequest(
      url,
      {
        method,
        headers: {
          Authorization: [...authorization],
          ...(body === undefined ? {} : { "content-type": "application/json" })
        }
      },
      (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
      }
    )
    request.on("error", reject)
    request.end(body)
  })

for (const example of [
  { name: "Express 5", start: Express.start },
  { name: "Hono", start: Hono.start }
] as const) {
  describe(`examples/embed hardening: ${example.name}`, () => {
    let running: Running
    beforeAll(async () => {
      running = await startOnMigratedDatabase(example.start, env)
    }, 120_000)
    afterAll(() => running?.close())

    const post = async (path: string, body: BodyInit, headers: Record<string, string> = {}) => {
      const response = await fetch(`${running.url}/waybill${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
        body
      })
      // biome-ignore lint/suspicious/noExplicitAny: error bodies are inspected ad hoc
      return { status: response.status, body: (await response.json()) as any }
    }

    it("answers 401 before reading the body, and to two Authorization headers", async () => {
      const malformed = await post("/drafts", "{not json", { authorization: "" })
      assert.deepStrictEqual([malformed.status, malformed.body.code], [401, "unauthorized"])
      // A connection of its own: the host's adapter may close it rather than drain the unread body.
      const big = await new Promise<number>((resolve, reject) => {
        const request = nodeRequest(
          `${running.url}/waybill/events`,
          {
            method: "POST",
            agent: false,
            headers: { authorization: "Bearer wrong-key-000", "content-type": "text/plain" }
          },
          (response) => {
            response.resume()
            resolve(response.statusCode ?? 0)
          }
        )
        request.on("error", reject)
        request.end(`"${"a".repeat(2 * 1024 * 1024)}"`)
      })
      assert.strictEqual(big, 401)
      const good = `Bearer ${key}`
      assert.strictEqual(await withHeaderLines(`${running.url}/waybill/transport-shapes`, "GET", [good]), 200)
      for (const twice of [
        [good, "Bearer wrong"],
        ["Bearer wrong", good],
        [good, good]
      ]) {
        assert.strictEqual(await withHeaderLines(`${running.url}/waybill/transport-shapes`, "GET", twice), 401)
        assert.strictEqual(await withHeaderLines(`${running.url}/waybill/events`, "POST", twice, event("t2")), 401)
      }
    })

    it("refuses reserved keys at their path, anywhere in a body", async () => {
      for (const [path, body, at] of [
        [
          "/drafts",
          '{"origin":"manual","status":"draft","transportShapeId":"shape_line","transport":{"stops":[{"address":{"__proto__":{"x":1}}}]}}',
          "transport.stops.0.address.__proto__"
        ],
        [
          "/events",
          '{"type":"tour-created","payload":{"tour":{"id":"t","status":"planned","substatus":null,"properties":{"constructor":{}}}}}',
          "payload.tour.properties.constructor"
        ],
        ["/drafts/drf_unknown/actions", '{"type":"end-recurring","prototype":1}', "prototype"]
      ] as const) {
        const refused = await post(path, body)
        assert.deepStrictEqual([refused.status, refused.body.issues], [400, [{ path: at, message: RESERVED }]], path)
      }
      assert.strictEqual(({} as Record<string, unknown>).x, undefined)
    })

    it("refuses a non-finite number, invalid UTF-8 and a charset other than UTF-8", async () => {
      const infinite = await post(
        "/drafts",
        '{"origin":"manual","status":"draft","transportShapeId":"shape_line","transport":{"weightKg":-1e999}}'
      )
      assert.deepStrictEqual(
        [infinite.status, infinite.body.issues],
        [400, [{ path: "transport.weightKg", message: NOT_FINITE }]]
      )
      const bytes = Buffer.from(event("tour_X"))
      bytes[bytes.indexOf("X")] = 0xff
      const invalid = await post("/events", bytes)
      assert.deepStrictEqual([invalid.status, invalid.body.message], [400, "The request body is not valid UTF-8"])
      const utf16 = await post("/events", event("t3"), { "content-type": "application/json; charset=utf-16" })
      assert.deepStrictEqual([utf16.status, utf16.body.code], [415, "unsupported_media_type"])
      const utf8 = await post("/events", event("tour_ü"), { "content-type": 'application/json; charset="UTF-8"' })
      assert.strictEqual(utf8.status, 202)
    })

    it("holds the webhook limit set through Waybill.make's variables", async () => {
      const webhook = (n: number) =>
        JSON.stringify({
          url: `https://hooks.example.org/${n}`,
          events: ["tour-created"],
          auth: { type: "bearer", token: "a-token" }
        })
      assert.strictEqual((await post("/webhooks", webhook(1))).status, 201)
      assert.strictEqual((await post("/webhooks", webhook(2))).status, 201)
      const third = await post("/webhooks", webhook(3))
      assert.deepStrictEqual([third.status, third.body.code], [409, "conflict"])
    })
  })
}
