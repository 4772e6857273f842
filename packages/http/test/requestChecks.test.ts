/**
 * The request checks in front of the API (contract §1), as an embedder's web handler and over
 * node:http: authentication before the body, one `Authorization` header, the media type and its
 * charset, UTF-8, finite numbers and reserved keys; and the request object the API reads the
 * body through, which stands in for the platform's.
 */
import { request as nodeRequest } from "node:http"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Http from "../src/Http.js"
import { CheckedServerRequest } from "../src/internal/checkedRequest.js"
import { mediaTypeRefusal } from "../src/internal/requestChecks.js"
import { keyA, ports } from "./fixtures.js"

const web = Http.toWebHandler(ports)
afterAll(() => web.dispose())

interface Answer {
  readonly status: number
  // biome-ignore lint/suspicious/noExplicitAny: error bodies are inspected ad hoc
  readonly body: any
}

const send = async (path: string, init: RequestInit & { readonly duplex?: "half" }): Promise<Answer> => {
  const response = await web.handler(new Request(`http://waybill.test${path}`, init))
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

const json = { "content-type": "application/json", authorization: `Bearer ${keyA}` }
const validEvent = { type: "tour-created", payload: { tour: { id: "tour_1", status: "planned", properties: {} } } }

// A body that fails as soon as anyone reads it: a check that reads it answers 400, not 401.
const unreadable = () =>
  new ReadableStream<Uint8Array>({
    pull: () => {
      throw new Error("the body was read")
    }
  })

describe("request checks", () => {
  it.live("answer 401 to a body method without a valid key before reading the body", () =>
    Effect.promise(async () => {
      for (const path of ["/drafts", "/events", "/webhooks", "/drafts/drf_x/actions", "/nowhere"]) {
        for (const authorization of [undefined, "Bearer wrong-key-0000", `Basic ${keyA}`]) {
          const answer = await send(path, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(authorization === undefined ? {} : { authorization })
            },
            body: unreadable(),
            duplex: "half"
          })
          assert.strictEqual(answer.status, 401, `${path} ${authorization}`)
          assert.strictEqual(answer.body.code, "unauthorized")
        }
      }
      // Malformed JSON, a wrong media type, a body too large: 401 first, whatever the body.
      for (const [contentType, body] of [
        ["application/json", "{not json"],
        ["text/plain", "{}"],
        ["application/json; charset=utf-16", "{}"],
        ["application/json", "x".repeat(2 * 1024 * 1024)]
      ] as const) {
        const answer = await send("/drafts", { method: "POST", headers: { "content-type": contentType }, body })
        assert.strictEqual(answer.status, 401, contentType)
      }
      // With the key, the same unreadable body is read, and refused.
      const read = await send("/drafts", { method: "PUT", headers: json, body: unreadable(), duplex: "half" })
      assert.deepStrictEqual([read.status, read.body.message], [400, "The request body could not be read"])
    })
  )

  it.live("answer 401 to two Authorization headers, joined by a Fetch request, on every route", () =>
    Effect.promise(async () => {
      const twice = new Headers({ "content-type": "application/json" })
      twice.append("authorization", `Bearer ${keyA}`)
      twice.append("authorization", `Bearer ${keyA}`)
      assert.strictEqual(twice.get("authorization"), `Bearer ${keyA}, Bearer ${keyA}`)
      assert.strictEqual(
        (await send("/events", { method: "POST", headers: twice, body: JSON.stringify(validEvent) })).status,
        401
      )
      assert.strictEqual((await send("/transport-shapes", { headers: twice })).status, 401)
      const goodThenEmpty = new Headers()
      goodThenEmpty.append("authorization", `Bearer ${keyA}`)
      goodThenEmpty.append("authorization", "")
      assert.strictEqual((await send("/transport-shapes", { headers: goodThenEmpty })).status, 401)
      assert.strictEqual(
        (await send("/transport-shapes", { headers: { authorization: `Bearer ${keyA}` } })).status,
        200
      )
    })
  )

  it("take application/json with no charset but UTF-8, any case, quoted or not", () => {
    for (const accepted of [
      "application/json",
      "Application/JSON",
      "application/json; charset=utf-8",
      "application/json;charset=UTF-8",
      'application/json; charset="utf-8"',
      "application/json; boundary=x; charset=Utf-8",
      "application/json ; foo",
      "application/json;"
    ]) {
      assert.isUndefined(mediaTypeRefusal(accepted), accepted)
    }
    for (const refused of [
      undefined,
      "text/plain",
      "application/jsonx",
      "application/merge-patch+json",
      "application/json; charset=utf-16",
      "application/json; charset=UTF-16LE",
      'application/json; charset="latin1"',
      "application/json; charset=utf8",
      "application/json; charset=utf-8; charset=iso-8859-1",
      "application/json; charset="
    ]) {
      assert.isString(mediaTypeRefusal(refused), String(refused))
    }
  })

  it.live("refuse another charset with 415, invalid UTF-8 and a byte order mark with 400", () =>
    Effect.promise(async () => {
      const post = (body: BodyInit, contentType = "application/json") =>
        send("/events", { method: "POST", headers: { ...json, "content-type": contentType }, body })
      const utf16 = await post(JSON.stringify(validEvent), "application/json; charset=utf-16")
      assert.deepStrictEqual([utf16.status, utf16.body.code], [415, "unsupported_media_type"])
      assert.include(utf16.body.message, "charset=utf-16")
      assert.strictEqual((await post(JSON.stringify(validEvent), 'application/json; charset="UTF-8"')).status, 202)
      // "é" in Latin-1, a lone continuation byte, an overlong encoding, a surrogate encoded in UTF-8.
      for (const bad of [[0xe9], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80]]) {
        const text = JSON.stringify({ ...validEvent, payload: { tour: { ...validEvent.payload.tour, id: "X" } } })
        const at = text.indexOf("X")
        const bytes = new Uint8Array([...Buffer.from(text.slice(0, at)), ...bad, ...Buffer.from(text.slice(at + 1))])
        const answer = await post(bytes)
        assert.deepStrictEqual(
          [answer.status, answer.body.message],
          [400, "The request body is not valid UTF-8"],
          `${bad}`
        )
      }
      const bom = await post(new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from(JSON.stringify(validEvent))]))
      assert.strictEqual(bom.status, 400)
      assert.include(bom.body.message, "Malformed JSON")
      // Multi-byte UTF-8 is text like any other.
      const umlaut = { ...validEvent, payload: { tour: { ...validEvent.payload.tour, id: "tour_Müller_東京_😀" } } }
      assert.strictEqual((await post(Buffer.from(JSON.stringify(umlaut)))).status, 202)
    })
  )

  it.live("refuse non-finite numbers and reserved keys at their path, anywhere in a body", () =>
    Effect.promise(async () => {
      const post = (path: string, body: string) => send(path, { method: "POST", headers: json, body })
      const infinite = await post(
        "/drafts",
        '{"origin":"manual","status":"draft","transportShapeId":"shape_line","transport":{"loads":[{"weightKg":1e400}]}}'
      )
      assert.strictEqual(infinite.status, 400)
      assert.deepStrictEqual(infinite.body.issues, [
        {
          path: "transport.loads.0.weightKg",
          message: "is a number beyond the range of a double (±1.8e308), which would be changed to null"
        }
      ])
      for (const [path, body, at] of [
        [
          "/drafts",
          '{"origin":"manual","status":"draft","transportShapeId":"shape_line","transport":{"a":{"__proto__":{"x":1}}}}',
          "transport.a.__proto__"
        ],
        [
          "/events",
          '{"type":"tour-created","payload":{"tour":{"id":"t","properties":{"constructor":1}}}}',
          "payload.tour.properties.constructor"
        ],
        ["/drafts/drf_x/actions", '{"type":"activate-recurring","prototype":{}}', "prototype"],
        [
          "/webhooks",
          '{"url":"https://x.example","events":["tour-created"],"auth":{"type":"hmac","secret":"0123456789abcdef","__pr\\u006fto__":1}}',
          "auth.__proto__"
        ]
      ] as const) {
        const answer = await post(path, body)
        assert.strictEqual(answer.status, 400, path)
        assert.deepStrictEqual(
          answer.body.issues,
          [
            {
              path: at,
              message: "is a reserved key: __proto__, constructor and prototype are refused anywhere in a body"
            }
          ],
          path
        )
      }
      assert.strictEqual(({} as Record<string, unknown>).x, undefined)
    })
  )

  it.live("answer 400 to a body method that takes a body and was sent none", () =>
    Effect.promise(async () => {
      const answer = await send("/webhooks", { method: "POST", headers: { authorization: `Bearer ${keyA}` } })
      assert.deepStrictEqual(answer, {
        status: 400,
        body: { code: "bad_request", message: "The request has no body; this endpoint takes a JSON body", issues: [] }
      })
    })
  )

  it.scoped("over node:http: two Authorization headers are 401 although Node keeps only the first", () =>
    Effect.gen(function* () {
      yield* HttpServer.serveEffect(yield* HttpApiBuilder.httpApp)
      const address = (yield* HttpServer.HttpServer).address
      const port = address._tag === "TcpAddress" ? address.port : 0
      const status = (method: string, path: string, authorization: string | ReadonlyArray<string>, body?: string) =>
        Effect.async<number>((resume) => {
          const request = nodeRequest(
            {
              host: "127.0.0.1",
              port,
              method,
              path,
              // An array sends one header line per value (`Authorization` is typed as one string).
              headers: { Authorization: [...(typeof authorization === "string" ? [authorization] : authorization)] }
            },
            (response) => {
              response.resume()
              resume(Effect.succeed(response.statusCode ?? 0))
            }
          )
          if (body !== undefined) request.setHeader("content-type", "application/json")
          request.end(body)
        })
      const good = `Bearer ${keyA}`
      assert.strictEqual(yield* status("GET", "/transport-shapes", good), 200)
      assert.strictEqual(yield* status("GET", "/transport-shapes", [good, "Bearer wrong"]), 401)
      assert.strictEqual(yield* status("GET", "/transport-shapes", [good, good]), 401)
      assert.strictEqual(yield* status("POST", "/events", good, JSON.stringify(validEvent)), 202)
      assert.strictEqual(yield* status("POST", "/events", [good, "Bearer wrong"], JSON.stringify(validEvent)), 401)
    }).pipe(
      Effect.provide(
        Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer).pipe(
          Layer.provideMerge(Http.layerApi),
          Layer.provideMerge(NodeHttpServer.layerTest),
          Layer.provide(ports)
        )
      )
    )
  )

  it("the checked request answers the platform's whole request interface", () => {
    // The compiler holds the class to the platform's `HttpServerRequest` interface; at run time,
    // every member the interface has must answer, delegating what is not the body.
    const platform = HttpServerRequest.fromWeb(
      new Request("http://waybill.test/drafts?limit=5", { method: "POST", headers: { cookie: "a=1", "x-y": "z" } })
    )
    const checked = new CheckedServerRequest(platform, {
      bytes: new Uint8Array(Buffer.from('{"a":1}')),
      text: '{"a":1}',
      value: { a: 1 }
    })
    assert.isTrue(HttpServerRequest.HttpServerRequest.key in { [HttpServerRequest.HttpServerRequest.key]: checked })
    assert.strictEqual(checked[HttpServerRequest.TypeId], HttpServerRequest.TypeId)
    assert.deepStrictEqual(
      [checked.method, checked.url, checked.originalUrl, checked.cookies, checked.headers["x-y"], checked.source],
      [platform.method, platform.url, platform.originalUrl, platform.cookies, "z", platform.source]
    )
    assert.deepStrictEqual(Effect.runSync(checked.json), { a: 1 })
    assert.strictEqual(Effect.runSync(checked.text), '{"a":1}')
    assert.strictEqual(Buffer.from(Effect.runSync(checked.arrayBuffer)).toString(), '{"a":1}')
    // Printed (a log line, an error's cause): no body, no query values, no headers.
    const printed = JSON.stringify(checked.toJSON())
    for (const hidden of ['{\\"a\\":1}', "limit=5", "a=1"]) assert.notInclude(printed, hidden)
    assert.include(printed, "/drafts")
    const moved = checked.modify({ url: "/elsewhere" })
    assert.instanceOf(moved, CheckedServerRequest)
    assert.deepStrictEqual([moved.url, Effect.runSync(moved.json)], ["/elsewhere", { a: 1 }])
    // Every key of the platform's own request is answered by ours as well.
    const missing = Object.keys(Object.getOwnPropertyDescriptors(Object.getPrototypeOf(platform))).filter(
      (key) => key !== "constructor" && !(key in checked) && !key.startsWith("cached") && !key.endsWith("Effect")
    )
    assert.deepStrictEqual(missing, [])
  })
})
