/**
 * The request rules over real HTTP on the reference server (contract §1, §2, §5): webhooks per
 * workspace, 401 before the body and two `Authorization` headers, a request log without query
 * values, the request deadline and connection cap, reserved keys, non-finite numbers, invalid
 * UTF-8 and other charsets, and the dry run's cap.
 */
import { connect, type Socket } from "node:net"
import * as HttpServer from "@effect/platform/HttpServer"
import { assert, layer } from "@effect/vitest"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Layer, Logger } from "effect"
import { contractMaster } from "./fixtures.js"
import { baseUrl, call, forEachServer, isErrorBody, keys, serverLayer } from "./harness.js"
import * as RawHttp from "./raw-http.js"

// The embedded back end (the first), from the run's migrated snapshot.
const pglite = Testing.backends()[0]!

const RESERVED = "is a reserved key: __proto__, constructor and prototype are refused anywhere in a body"
const NOT_FINITE = "is a number beyond the range of a double (±1.8e308), which would be changed to null"

const portOf = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress" ? server.address.port : 0
)

/** Where the API is mounted on its server: `""` on the reference server, `/waybill` in Express. */
const mountPath = Effect.map(baseUrl, (url) => new URL(url).pathname.replace(/\/$/, ""))

/** A raw connection: what it received, and when it closed. */
const rawConnection = (port: number) =>
  Effect.promise(
    () =>
      new Promise<{ socket: Socket; received: () => string; closed: Promise<number> }>((resolve) => {
        let received = ""
        const socket = connect(port, "127.0.0.1")
        socket.on("data", (chunk) => {
          received += chunk.toString("latin1")
        })
        socket.on("error", () => {})
        const closed = new Promise<number>((done) => socket.on("close", () => done(Date.now())))
        socket.on("connect", () => resolve({ socket, received: () => received, closed }))
      })
  )

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** When a connection closed, or `Infinity` when it is still open after 10 s. */
const closedWithin10s = (closed: Promise<number>) =>
  Effect.promise(() =>
    Promise.race([
      closed,
      new Promise<number>((resolve) => setTimeout(() => resolve(Number.POSITIVE_INFINITY), 10_000))
    ])
  )

/** Sends raw bytes on a new connection and answers the first answer, once the server closed it. */
const exchange = (port: number, bytes: string) =>
  Effect.map(
    Effect.promise(() => RawHttp.exchange(port, bytes, 10_000)),
    RawHttp.parseAnswer
  )

/** The status of a request with repeated `Authorization` headers, one line each. */
const withHeaderLines = (
  port: number,
  method: string,
  path: string,
  authorization: ReadonlyArray<string>,
  body?: string
) =>
  Effect.map(
    Effect.promise(() => RawHttp.withHeaderLines(`http://127.0.0.1:${port}${path}`, method, authorization, body)),
    (reply) => reply.status
  )

const webhook = (n: number) => ({
  url: `https://hooks.example.org/limit/${n}`,
  events: ["tour-created"],
  auth: { type: "hmac", secret: "hardening-secret-0123456789" }
})

forEachServer(
  "hardening over HTTP",
  (it) => {
    it.effect("a workspace holds at most its limit of webhooks, also when registrations arrive together", () =>
      Effect.gen(function* () {
        for (let n = 0; n < 4; n++)
          assert.strictEqual((yield* call("/webhooks", { key: keys.a, json: webhook(n) })).status, 201)
        const together = yield* Effect.all(
          Array.from({ length: 6 }, (_, n) => call("/webhooks", { key: keys.a, json: webhook(10 + n) })),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(together.map((reply) => reply.status).sort(), [201, 409, 409, 409, 409, 409])
        const refused = together.find((reply) => reply.status === 409)!
        assert.isTrue(isErrorBody(refused, 409, "conflict"), refused.text)
        assert.include(refused.body.message, "already has 5 webhooks")
        const listed = yield* call("/webhooks?limit=100", { key: keys.a })
        assert.strictEqual(listed.body.data.length, 5)
        // Another workspace counts its own; a deletion makes room.
        assert.strictEqual((yield* call("/webhooks", { key: keys.b, json: webhook(0) })).status, 201)
        const first = listed.body.data[0].id as string
        assert.strictEqual((yield* call(`/webhooks/${first}`, { key: keys.a, method: "DELETE" })).status, 204)
        assert.strictEqual((yield* call("/webhooks", { key: keys.a, json: webhook(20) })).status, 201)
        assert.strictEqual((yield* call("/webhooks", { key: keys.a, json: webhook(21) })).status, 409)
      })
    )

    it.effect("a body method without a valid key is 401 before its body is read or parsed", () =>
      Effect.gen(function* () {
        const malformed = yield* call("/drafts", { body: "{not json", headers: { "content-type": "application/json" } })
        assert.isTrue(isErrorBody(malformed, 401, "unauthorized"), malformed.text)
        for (const path of ["/drafts", "/events", "/webhooks", "/drafts/drf_x/actions", "/products/prod_ftl/execute"]) {
          const big = yield* call(path, {
            key: "not-a-valid-key-000",
            body: `{"x":"${"a".repeat(2 * 1024 * 1024)}"}`,
            headers: { "content-type": "text/plain; charset=utf-16" }
          })
          assert.strictEqual(big.status, 401, path)
        }
        // Headers only, the body never sent: the 401 comes without it.
        const port = yield* portOf
        const mount = yield* mountPath
        const raw = yield* rawConnection(port)
        raw.socket.write(
          `POST ${mount}/drafts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`
        )
        yield* Effect.promise(async () => {
          for (let waited = 0; !raw.received().includes("\r\n\r\n") && waited < 10_000; waited += 20) {
            await new Promise((resolve) => setTimeout(resolve, 20))
          }
        })
        assert.match(raw.received(), /^HTTP\/1\.1 401 /)
        // The unread body is not taken for a next request: the connection closes after the answer.
        assert.match(raw.received(), /\r\nconnection: close\r\n/i)
        raw.socket.destroy()
      })
    )

    it.effect("two Authorization headers are 401, whichever comes first", () =>
      Effect.gen(function* () {
        const port = yield* portOf
        const mount = yield* mountPath
        const good = `Bearer ${keys.a}`
        assert.strictEqual(yield* withHeaderLines(port, "GET", `${mount}/transport-shapes`, [good]), 200)
        for (const twice of [
          [good, "Bearer wrong"],
          ["Bearer wrong", good],
          [good, good],
          [good, `Bearer ${keys.b}`]
        ]) {
          assert.strictEqual(
            yield* withHeaderLines(port, "GET", `${mount}/transport-shapes`, twice),
            401,
            String(twice)
          )
          const event = JSON.stringify({ type: "tour-created", payload: { tour: { id: "t", properties: {} } } })
          assert.strictEqual(yield* withHeaderLines(port, "POST", `${mount}/events`, twice, event), 401, String(twice))
        }
      })
    )

    it.effect(
      "reserved keys anywhere in a body are 400 at their path, free-form objects included, nothing stored",
      () =>
        Effect.gen(function* () {
          const master = (yield* call("/drafts", { key: keys.a, json: contractMaster() })).body.id as string
          const hook = (yield* call("/webhooks", { key: keys.b, json: webhook(99) })).body.id as string
          const before = (yield* call("/drafts?limit=100", { key: keys.a })).body.data.length
          const draft = JSON.stringify(contractMaster()).replace(
            '"city":"Berlin"',
            '"city":"Berlin","__proto__":{"admin":true}'
          )
          const cases = [
            ["POST", "/drafts", draft, "transport.multiStopData.stops.1.address.__proto__", keys.a],
            [
              "POST",
              "/drafts",
              '{"origin":"manual","status":"draft","transportShapeId":"shape_line","transport":{"a":[{"b":{"constructor":{}}}]}}',
              "transport.a.0.b.constructor",
              keys.a
            ],
            [
              "POST",
              "/events",
              '{"type":"tour-created","payload":{"tour":{"id":"t","status":"planned","substatus":null,"properties":{"prop_region":"x","prototype":1}}}}',
              "payload.tour.properties.prototype",
              keys.a
            ],
            [
              "POST",
              `/drafts/${master}/actions`,
              '{"type":"activate-recurring","__proto__":null}',
              "__proto__",
              keys.a
            ],
            [
              "POST",
              "/products/prod_ftl/execute",
              `{"draftId":"${master}","constructor":{"x":1}}`,
              "constructor",
              keys.a
            ],
            [
              "POST",
              "/webhooks",
              JSON.stringify(webhook(1)).replace('"auth":{', '"auth":{"\\u005f_proto__":{"x":1},'),
              "auth.__proto__",
              keys.b
            ],
            [
              "PUT",
              `/console/api/webhooks/${hook}`,
              JSON.stringify({ ...webhook(1), description: "d" }).replace(
                '"description"',
                '"constructor":{"prototype":{}},"description"'
              ),
              "constructor",
              keys.b
            ]
          ] as const
          for (const [method, path, body, at, key] of cases) {
            const reply = yield* call(path, { method, key, body, headers: { "content-type": "application/json" } })
            assert.isTrue(isErrorBody(reply, 400, "bad_request"), `${path}: ${reply.text}`)
            assert.deepInclude(reply.body.issues, { path: at, message: RESERVED }, path)
          }
          assert.strictEqual((yield* call("/drafts?limit=100", { key: keys.a })).body.data.length, before)
          assert.strictEqual((yield* call(`/drafts/${master}`, { key: keys.a })).body.status, "draft")
        })
    )

    it.effect("a non-finite number is 400 at its path; invalid UTF-8 is 400; a charset but UTF-8 is 415", () =>
      Effect.gen(function* () {
        const infinite = yield* call("/drafts", {
          key: keys.a,
          body: JSON.stringify(contractMaster()).replace('"weightKg":900', '"weightKg":1e400'),
          headers: { "content-type": "application/json" }
        })
        assert.isTrue(isErrorBody(infinite, 400, "bad_request"), infinite.text)
        assert.deepStrictEqual(infinite.body.issues, [
          { path: "transport.multiStopData.stops.0.loads.0.weightKg", message: NOT_FINITE }
        ])
        const base = yield* baseUrl
        const post = (body: BodyInit, contentType: string) =>
          Effect.promise(async () => {
            const response = await fetch(`${base}/events`, {
              method: "POST",
              headers: { authorization: `Bearer ${keys.a}`, "content-type": contentType },
              body
            })
            return { status: response.status, body: (await response.json()) as { code: string; message: string } }
          })
        const event = Buffer.from(
          '{"type":"tour-created","payload":{"tour":{"id":"tour_X","status":"planned","substatus":null,"properties":{}}}}'
        )
        const latin1 = Buffer.from(event)
        latin1[latin1.indexOf("X")] = 0xe9
        const invalid = yield* post(latin1, "application/json")
        assert.deepStrictEqual([invalid.status, invalid.body.message], [400, "The request body is not valid UTF-8"])
        for (const charset of ["utf-16", "UTF-16LE", "iso-8859-1", '"latin1"']) {
          const refused = yield* post(event, `application/json; charset=${charset}`)
          assert.deepStrictEqual([refused.status, refused.body.code], [415, "unsupported_media_type"], charset)
        }
        for (const charset of ["utf-8", "UTF-8", '"utf-8"']) {
          assert.strictEqual((yield* post(event, `application/json; charset=${charset}`)).status, 202, charset)
        }
      })
    )

    it.effect("the dry run answers the earliest 10,000 occurrences and says when there are more", () =>
      Effect.gen(function* () {
        const minutely = contractMaster()
        minutely.recurringSchedule = {
          cronExpressions: ["* * * * *"],
          timezone: "Europe/Berlin",
          leadTimeDays: 0
        } as unknown as typeof minutely.recurringSchedule
        const master = yield* call("/drafts", { key: keys.a, json: minutely })
        assert.strictEqual(master.status, 201, master.text)
        const now = Math.floor(Date.now() / 1000)
        const year = yield* call(`/drafts/${master.body.id}/occurrences?days=366`, { key: keys.a })
        assert.strictEqual(year.status, 200)
        assert.strictEqual(year.body.truncated, true)
        assert.strictEqual(year.body.data.length, 10_000)
        const triggers = year.body.data.map((occurrence: { triggerAt: number }) => occurrence.triggerAt)
        assert.isAtLeast(triggers[0], now - 60)
        assert.isAtMost(triggers[0], now + 120)
        assert.isTrue(triggers.every((at: number, i: number) => i === 0 || at - triggers[i - 1] === 60))
        const day = yield* call(`/drafts/${master.body.id}/occurrences?days=1`, { key: keys.a })
        assert.strictEqual(day.status, 200)
        assert.isBelow(day.body.data.length, 10_000)
        assert.notProperty(day.body, "truncated")
      })
    )
  },
  { maxWebhooksPerWorkspace: 5 }
)

// The deadline and the connection cap concern connections, not storage: PGlite only.
layer(serverLayer(pglite, { requestTimeoutMs: 600, maxConnections: 4 }), {
  timeout: "120 seconds",
  excludeTestServices: true
})("request deadline and connection cap [pglite]", (it) => {
  it.effect("a request whose body or headers trickle in is closed at the deadline", () =>
    Effect.gen(function* () {
      const port = yield* portOf
      const body = yield* rawConnection(port)
      const started = Date.now()
      body.socket.write(
        `POST /events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.a}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{`
      )
      const trickle = setInterval(() => body.socket.writable && body.socket.write(" "), 100)
      const closedAt = yield* closedWithin10s(body.closed)
      clearInterval(trickle)
      assert.isAtMost(closedAt - started, 5_000)
      assert.match(body.received(), /^HTTP\/1\.1 408 /)
      assert.strictEqual(RawHttp.parseAnswer(body.received()).error?.code, "request_timeout", body.received())

      const headers = yield* rawConnection(port)
      const headersStarted = Date.now()
      headers.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n")
      const slowHeader = setInterval(() => headers.socket.writable && headers.socket.write("X-Slow: y\r\n"), 100)
      const headersClosedAt = yield* closedWithin10s(headers.closed)
      clearInterval(slowHeader)
      assert.isAtMost(headersClosedAt - headersStarted, 5_000)
      assert.strictEqual(RawHttp.parseAnswer(headers.received()).status, 408, headers.received())
      assert.strictEqual(RawHttp.parseAnswer(headers.received()).error?.code, "request_timeout", headers.received())

      // A request that arrives in time is answered, and its connection kept.
      const quick = yield* rawConnection(port)
      quick.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
      yield* sleep(1_500)
      assert.match(quick.received(), /^HTTP\/1\.1 200 /)
      assert.isFalse(quick.socket.destroyed)
      quick.socket.destroy()
    })
  )

  it.effect("what Node's parser refuses is answered with the error body, naming a bad header, and closed", () =>
    Effect.gen(function* () {
      const port = yield* portOf
      const cases: ReadonlyArray<readonly [string, number, string]> = [
        [
          `POST /events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.a}\r\nIdempotency-Key: a\x01b\r\nContent-Length: 2\r\n\r\n{}`,
          400,
          "bad_request"
        ],
        [
          `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
          431,
          "request_header_fields_too_large"
        ],
        ["GET /health HTTP/1.2\r\nHost: x\r\n\r\n", 505, "http_version_not_supported"],
        ["GARBAGE\r\n\r\n", 400, "bad_request"],
        ["GET /health HTTP/1.1\r\nHo st: x\r\n\r\n", 400, "bad_request"]
      ]
      for (const [bytes, status, code] of cases) {
        const answer = yield* exchange(port, bytes)
        const shown = JSON.stringify(bytes.slice(0, 80))
        assert.strictEqual(answer.status, status, shown)
        assert.strictEqual(answer.error?.code, code, shown)
        assert.strictEqual(answer.headers["content-type"], "application/json", shown)
        assert.strictEqual(answer.headers.connection, "close", shown)
      }
      const control = yield* exchange(port, cases[0]![0])
      assert.deepStrictEqual(control.error?.issues, [
        { path: "Idempotency-Key", message: "must not contain control characters" }
      ])
      // A bearer key with a control character is refused without quoting it back.
      const secret = yield* exchange(
        port,
        `GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cr\x7fet\r\n\r\n`
      )
      assert.deepStrictEqual(secret.error?.issues, [
        { path: "Authorization", message: "must not contain control characters" }
      ])
      assert.notInclude(JSON.stringify(secret.error), "s3cr")
    })
  )

  it.effect("connections past the cap are closed as they arrive; a closed one makes room", () =>
    Effect.gen(function* () {
      const port = yield* portOf
      // Let connections of earlier tests go.
      yield* sleep(300)
      const held = []
      for (let i = 0; i < 4; i++) {
        const connection = yield* rawConnection(port)
        connection.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        held.push(connection)
      }
      yield* sleep(300)
      for (const connection of held) assert.match(connection.received(), /^HTTP\/1\.1 200 /)
      const refused = yield* rawConnection(port)
      refused.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
      assert.isBelow(yield* closedWithin10s(refused.closed), Number.POSITIVE_INFINITY)
      assert.strictEqual(refused.received(), "")
      held[0]!.socket.destroy()
      yield* sleep(300)
      const admitted = yield* rawConnection(port)
      admitted.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
      yield* sleep(300)
      assert.match(admitted.received(), /^HTTP\/1\.1 200 /)
      for (const connection of [...held, admitted]) connection.socket.destroy()
    })
  )
})

// What the request log writes, captured.
const logged: Array<string> = []
const capture = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ message }) => {
    logged.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
  })
)

layer(serverLayer(pglite).pipe(Layer.provide(capture)), { timeout: "120 seconds", excludeTestServices: true })(
  "request log [pglite]",
  (it) => {
    it.effect("names a query's parameters, never their values", () =>
      Effect.gen(function* () {
        const secret = "sekret-value-0123456789"
        yield* call(`/drafts?api_key=${secret}&limit=5`, { key: keys.a })
        yield* call(`/nowhere?token=${secret}`)
        yield* call(`/drafts?${secret}`, { key: keys.a })
        yield* call(`/events?key=${secret}`, { key: keys.a, json: { type: "x", payload: {} } })
        yield* sleep(100)
        const lines = logged.filter((line) => /^(GET|POST) \//.test(line))
        assert.isAtLeast(lines.length, 4, logged.join("\n"))
        assert.isTrue(
          lines.some((line) => line.startsWith("GET /drafts?api_key&limit 200 ")),
          lines.join("\n")
        )
        assert.isTrue(
          lines.some((line) => line.startsWith("GET /nowhere?token 404 ")),
          lines.join("\n")
        )
        assert.isTrue(
          lines.some((line) => line.startsWith("GET /drafts?… 200 ")),
          lines.join("\n")
        )
        assert.isTrue(
          lines.some((line) => line.startsWith("POST /events?key 400 ")),
          lines.join("\n")
        )
        assert.isFalse(
          logged.some((line) => line.includes(secret)),
          logged.join("\n")
        )
      })
    )
  }
)
