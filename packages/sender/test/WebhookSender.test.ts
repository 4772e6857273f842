import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as net from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { HostResolver } from "@waybill/webhooks/HostResolver"
import type { SendRequest } from "@waybill/webhooks/HttpSender"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import { errors } from "undici"
import { classify, layerResolver, make, type Options } from "../src/WebhookSender.js"

// A self-signed certificate for 127.0.0.1 (test only; generated with openssl, valid until 2126).
const key = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgL6LYtNr9z/PAwTeD
6DxF6u81ggsSYeHVifEVtv9S8yihRANCAAS2DaAkhQWnTltu+nPXPtUzdL8CJcvo
58lrV/egchG40/ltNmMfKdTtagLy8zJ+MYnhJN2A3z7BmnJcOqySOPvt
-----END PRIVATE KEY-----`
const cert = `-----BEGIN CERTIFICATE-----
MIIBjzCCATagAwIBAgIUPoMV11CiZInMyQqFMGvo4rtXNwAwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMjAxMjEyNFoYDzIxMjYxMDI5
MDEyMTI0WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAS2DaAkhQWnTltu+nPXPtUzdL8CJcvo58lrV/egchG40/ltNmMfKdTt
agLy8zJ+MYnhJN2A3z7BmnJcOqySOPvto2QwYjAdBgNVHQ4EFgQUpudeM4cqlF4q
Ny7BQSeu6qLh+Y0wHwYDVR0jBBgwFoAUpudeM4cqlF4qNy7BQSeu6qLh+Y0wDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0cAMEQC
IFV+zFAA5hMGdt0Au5NG2UUvoL4QAvMoUJiRuXUOuKv2AiADVId/kr0KzmOf/JVD
NncqA8PqG3oGZDaDrLj9aHQs8w==
-----END CERTIFICATE-----`

interface Received {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
}

interface Receiver {
  readonly port: number
  readonly received: Array<Received>
  readonly connections: () => number
  readonly closed: Array<string>
}

// A receiver on 127.0.0.1 and an ephemeral port, closed with the scope.
const serve = (respond: (request: http.IncomingMessage, response: http.ServerResponse) => void, secure = false) =>
  Effect.acquireRelease(
    Effect.async<Receiver & { readonly server: http.Server }>((resume) => {
      const received: Array<Received> = []
      const closed: Array<string> = []
      let connections = 0
      const handler = (request: http.IncomingMessage, response: http.ServerResponse) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          received.push({
            method: request.method ?? "",
            url: request.url ?? "",
            headers: request.headers,
            body: Buffer.concat(chunks)
          })
          respond(request, response)
        })
        response.on("close", () => closed.push(request.url ?? ""))
      }
      const server = secure ? https.createServer({ key, cert }, handler) : http.createServer(handler)
      server.on(secure ? "secureConnection" : "connection", () => connections++)
      server.listen(0, "127.0.0.1", () =>
        resume(
          Effect.succeed({
            server,
            port: (server.address() as AddressInfo).port,
            received,
            closed,
            connections: () => connections
          })
        )
      )
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const request = (url: string, overrides: Partial<SendRequest> = {}): SendRequest => ({
  url,
  headers: {
    "Content-Type": "application/json",
    "X-Delivery-Id": "dlv_1",
    "X-Event-Id": "evt_1",
    "X-Event-Type": "tour-created",
    "X-Delivery-Attempt": "1"
  },
  body: '{"id":"evt_1","type":"tour-created","createdAt":1798000000,"payload":{"tour":{"id":"tour_1","name":"Köln → Łódź"}}}',
  timeoutMs: 5_000,
  ...overrides
})

const sender = (options: Partial<Options> = {}) => make({ allowPrivateTargets: true, ...options })

// A receiver written at the byte level, to play responses `node:http` would never send: each
// request (read whole, by its Content-Length) is answered by `respond` with raw pieces written
// one by one, a few milliseconds apart; `null` closes the connection there.
const serveRaw = (respond: (index: number) => ReadonlyArray<string | null>) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: net.Server; readonly port: number; readonly connections: () => number }>(
      (resume) => {
        let connections = 0
        let index = 0
        const sockets = new Set<net.Socket>()
        const server = net.createServer((socket) => {
          connections++
          sockets.add(socket)
          socket.on("close", () => sockets.delete(socket))
          socket.on("error", () => {})
          let buffered = ""
          socket.on("data", async (chunk) => {
            buffered += chunk.toString("latin1")
            while (true) {
              const end = buffered.indexOf("\r\n\r\n")
              if (end < 0) return
              const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0)
              if (buffered.length < end + 4 + length) return
              buffered = buffered.slice(end + 4 + length)
              for (const piece of respond(index++)) {
                if (piece === null) return void socket.end()
                socket.write(Buffer.from(piece, "latin1"))
                await new Promise((resolve) => setTimeout(resolve, 5))
              }
            }
          })
        })
        server.on("close", () => {
          for (const socket of sockets) socket.destroy()
        })
        server.listen(0, "127.0.0.1", () =>
          resume(
            Effect.succeed({ server, port: (server.address() as AddressInfo).port, connections: () => connections })
          )
        )
      }
    ),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.emit("close")
      })
  )

const reasonOf = <A>(result: Either.Either<A, { readonly reason: string }>) =>
  Either.isLeft(result) ? result.left.reason : "none"

describe("WebhookSender", () => {
  it.scopedLive("posts the body bytes unchanged with the given headers and answers the status", () =>
    Effect.gen(function* () {
      const receiver = yield* serve((_, response) => response.writeHead(204).end())
      const send = yield* sender()
      const attempt = request(`http://127.0.0.1:${receiver.port}/hooks/waybill?x=1`)
      const response = yield* send.send(attempt)
      assert.deepStrictEqual(response, { statusCode: 204 })
      const [got] = receiver.received
      assert.strictEqual(got!.method, "POST")
      assert.strictEqual(got!.url, "/hooks/waybill?x=1")
      assert.isTrue(got!.body.equals(Buffer.from(attempt.body, "utf8")))
      assert.strictEqual(got!.headers["content-length"], String(Buffer.byteLength(attempt.body, "utf8")))
      assert.strictEqual(got!.headers["content-type"], "application/json")
      assert.strictEqual(got!.headers["x-delivery-id"], "dlv_1")
      assert.strictEqual(got!.headers["x-delivery-attempt"], "1")
      // A second attempt reuses the kept-alive connection.
      yield* send.send(attempt)
      assert.strictEqual(receiver.connections(), 1)
    })
  )

  it.scopedLive("refuses loopback targets unless private targets are allowed, before connecting", () =>
    Effect.gen(function* () {
      const receiver = yield* serve((_, response) => response.writeHead(200).end())
      const send = yield* sender({ allowPrivateTargets: false })
      for (const url of [
        `http://127.0.0.1:${receiver.port}/`,
        `http://[::ffff:127.0.0.1]:${receiver.port}/`,
        `http://localhost:${receiver.port}/`,
        `https://127.0.0.1:${receiver.port}/`
      ]) {
        const result = yield* Effect.either(send.send(request(url)))
        assert.strictEqual(reasonOf(result), "ssrf", url)
      }
      assert.strictEqual(receiver.connections(), 0)
      assert.strictEqual(receiver.received.length, 0)
      const allowed = yield* sender({ allowPrivateTargets: true })
      assert.deepStrictEqual(yield* allowed.send(request(`http://localhost:${receiver.port}/`)), { statusCode: 200 })
    })
  )

  it.scopedLive("checks the address a name resolves to when connecting (DNS rebinding)", () =>
    Effect.gen(function* () {
      const receiver = yield* serve((_, response) => response.writeHead(200).end())
      // A name that answered a public address at registration now answers loopback.
      const rebinding = ((_host: string, _options: unknown, callback: (...args: Array<unknown>) => void) =>
        callback(null, [
          { address: "93.184.215.14", family: 4 },
          { address: "127.0.0.1", family: 4 }
        ])) as unknown as Options["lookup"]
      const send = yield* sender({ allowPrivateTargets: false, lookup: rebinding })
      const result = yield* Effect.either(send.send(request(`http://hooks.example.test:${receiver.port}/`)))
      assert.strictEqual(reasonOf(result), "ssrf")
      if (Either.isLeft(result)) assert.include(result.left.message, "127.0.0.1")
      assert.strictEqual(receiver.connections(), 0)
      // The same resolver with private targets allowed does reach the receiver.
      const loopback = ((_host: string, options: { all?: boolean }, callback: (...args: Array<unknown>) => void) =>
        options.all === true
          ? callback(null, [{ address: "127.0.0.1", family: 4 }])
          : callback(null, "127.0.0.1", 4)) as unknown as Options["lookup"]
      const allowed = yield* sender({ allowPrivateTargets: true, lookup: loopback })
      assert.deepStrictEqual(yield* allowed.send(request(`http://hooks.example.test:${receiver.port}/`)), {
        statusCode: 200
      })
      assert.strictEqual(receiver.received.length, 1)
    })
  )

  it.scopedLive("fails with timeout when the answer does not come within the deadline", () =>
    Effect.gen(function* () {
      const receiver = yield* serve((_, response) => {
        setTimeout(() => response.writeHead(200).end(), 3_000).unref()
      })
      const send = yield* sender()
      const result = yield* Effect.either(send.send(request(`http://127.0.0.1:${receiver.port}/`, { timeoutMs: 200 })))
      assert.strictEqual(reasonOf(result), "timeout")
      if (Either.isLeft(result)) assert.strictEqual(result.left.message, "No response within 200 ms")
      assert.strictEqual(receiver.received.length, 1)
    })
  )

  it.scopedLive("the deadline covers the lookup: a resolver that never answers is a timeout", () =>
    Effect.gen(function* () {
      const silent = (() => {}) as unknown as Options["lookup"]
      const send = yield* sender({ lookup: silent })
      const result = yield* Effect.either(send.send(request("http://hooks.example.test/", { timeoutMs: 200 })))
      assert.strictEqual(reasonOf(result), "timeout")
      if (Either.isLeft(result)) assert.strictEqual(result.left.message, "No response within 200 ms")
    })
  )

  it.scopedLive("does not follow a redirect: the 3xx is the answer", () =>
    Effect.gen(function* () {
      const receiver = yield* serve((request, response) =>
        request.url === "/hook"
          ? response.writeHead(302, { Location: "/elsewhere" }).end()
          : response.writeHead(200).end()
      )
      const send = yield* sender()
      assert.deepStrictEqual(yield* send.send(request(`http://127.0.0.1:${receiver.port}/hook`)), { statusCode: 302 })
      assert.deepStrictEqual(
        receiver.received.map((got) => got.url),
        ["/hook"]
      )
    })
  )

  it.scopedLive("classifies a refused connection as connect and an unknown name as dns", () =>
    Effect.gen(function* () {
      const closed = yield* Effect.scoped(serve((_, response) => response.end()))
      const send = yield* sender()
      const refused = yield* Effect.either(send.send(request(`http://127.0.0.1:${closed.port}/`)))
      assert.strictEqual(reasonOf(refused), "connect")
      const unknown = yield* Effect.either(send.send(request("http://no-such-host.invalid/")))
      assert.strictEqual(reasonOf(unknown), "dns")
    })
  )

  it.scopedLive("reads at most 4 KiB of the response body, then drops the connection", () =>
    Effect.gen(function* () {
      const receiver = yield* serve((_, response) => {
        response.writeHead(200, { "Content-Type": "text/plain" })
        // 64 KiB, and the response never ends: waiting for its end would outlast the test.
        response.write(Buffer.alloc(64 * 1024, 120))
      })
      const send = yield* sender()
      const response = yield* send.send(request(`http://127.0.0.1:${receiver.port}/`, { timeoutMs: 120_000 }))
      assert.deepStrictEqual(response, { statusCode: 200 })
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      assert.deepStrictEqual(receiver.closed, ["/"])
    })
  )

  it.scopedLive("https: an untrusted certificate fails with tls; a trusted one is answered", () =>
    Effect.gen(function* () {
      const receiver = yield* serve((_, response) => response.writeHead(201).end(), true)
      const untrusting = yield* sender()
      const refused = yield* Effect.either(untrusting.send(request(`https://127.0.0.1:${receiver.port}/`)))
      assert.strictEqual(reasonOf(refused), "tls")
      const trusting = yield* sender({ ca: cert })
      assert.deepStrictEqual(yield* trusting.send(request(`https://127.0.0.1:${receiver.port}/`)), {
        statusCode: 201
      })
      assert.strictEqual(receiver.received.length, 1)
    })
  )

  it.scopedLive("interrupting an attempt aborts the request", () =>
    Effect.gen(function* () {
      const receiver = yield* serve(() => {
        // Never answers.
      })
      const send = yield* sender()
      const fiber = yield* Effect.fork(
        send.send(request(`http://127.0.0.1:${receiver.port}/slow`, { timeoutMs: 60_000 }))
      )
      while (receiver.received.length === 0)
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      yield* Fiber.interrupt(fiber)
      while (receiver.closed.length === 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      assert.deepStrictEqual(receiver.closed, ["/slow"])
    })
  )

  describe("HTTP/1.1 framing", () => {
    // Sends one attempt per expected status, in turn, to a byte-level receiver; answers how many
    // connections it took.
    const answersIn = (respond: (index: number) => ReadonlyArray<string | null>, statuses: ReadonlyArray<number>) =>
      Effect.gen(function* () {
        const receiver = yield* serveRaw(respond)
        const send = yield* sender()
        for (const statusCode of statuses) {
          assert.deepStrictEqual(yield* send.send(request(`http://127.0.0.1:${receiver.port}/`)), { statusCode })
        }
        return receiver.connections()
      })

    it.scopedLive("a chunked answer in pieces, then a Content-Length one in pieces: one connection", () =>
      Effect.gen(function* () {
        const connections = yield* answersIn(
          (index) =>
            index === 0
              ? ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", "lo\r\n3;x=y\r\nabc\r\n0\r\n", "\r\n"]
              : ["HTTP/1.1 202 Accepted\r\nContent-", "Length: 5\r\n\r\nhe", "llo"],
          [200, 202, 202]
        )
        assert.strictEqual(connections, 1)
      })
    )

    it.scopedLive("skips informational answers; answers without a body end at their head", () =>
      Effect.gen(function* () {
        const connections = yield* answersIn(
          (index) =>
            index === 0
              ? [
                  "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </b>\r\n\r\n",
                  "HTTP/1.1 204\r\n\r\n"
                ]
              : ["HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"],
          [204, 200]
        )
        assert.strictEqual(connections, 1)
      })
    )

    // undici refuses a `100 Continue` that no request asked for (it never sends `Expect`), where
    // the client it replaced skipped it like any informational answer.
    it.scopedLive("a 100 Continue nobody asked for fails with http; the connection is not reused", () =>
      Effect.gen(function* () {
        const receiver = yield* serveRaw((index) =>
          index === 0
            ? ["HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 204\r\n\r\n"]
            : ["HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"]
        )
        const send = yield* sender()
        const url = `http://127.0.0.1:${receiver.port}/`
        const result = yield* Effect.either(send.send(request(url)))
        assert.strictEqual(reasonOf(result), "http")
        if (Either.isLeft(result)) assert.strictEqual(result.left.message, "bad response")
        assert.deepStrictEqual(yield* send.send(request(url)), { statusCode: 200 })
        assert.strictEqual(receiver.connections(), 2)
      })
    )

    it.scopedLive("a connection the answer closes, or that ends its body by closing, is not reused", () =>
      Effect.gen(function* () {
        const connections = yield* answersIn(
          (index) =>
            index === 0
              ? ["HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", null]
              : ["HTTP/1.0 201 Created\r\n\r\nuntil the end", null],
          [200, 201, 201]
        )
        assert.strictEqual(connections, 3)
      })
    )

    it.scopedLive("a connection the receiver closed while idle is replaced", () =>
      Effect.gen(function* () {
        const receiver = yield* serveRaw(() => ["HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", null])
        const send = yield* sender()
        const url = `http://127.0.0.1:${receiver.port}/`
        assert.deepStrictEqual(yield* send.send(request(url)), { statusCode: 200 })
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
        assert.deepStrictEqual(yield* send.send(request(url)), { statusCode: 200 })
        assert.strictEqual(receiver.connections(), 2)
      })
    )

    it.scopedLive(
      "a request whose kept-alive connection the receiver closes unanswered goes again on a fresh one",
      () =>
        Effect.gen(function* () {
          // The second request meets the receiver's idle close: no answer, the connection ends.
          const connections = yield* answersIn(
            (index) => (index === 1 ? [null] : ["HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"]),
            [200, 200, 200]
          )
          assert.strictEqual(connections, 2)
        })
    )

    it.scopedLive(
      "an answer that is not HTTP/1.x, or a connection closed before its head, fails; nothing is reused",
      () =>
        Effect.gen(function* () {
          const receiver = yield* serveRaw((index) =>
            index === 0
              ? ["SSH-2.0-OpenSSH\r\n\r\n"]
              : index === 1
                ? ["HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"]
                : index === 2
                  ? ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]
                  : ["HTTP/1.1 20", null]
          )
          const send = yield* sender()
          const url = `http://127.0.0.1:${receiver.port}/`
          for (const expected of ["http", "http", "answered", "connect"]) {
            const result = yield* Effect.either(send.send(request(url)))
            // A body that breaks off after a head that reads whole is still an answer.
            assert.strictEqual(Either.isRight(result) ? "answered" : reasonOf(result), expected)
          }
          assert.strictEqual(receiver.connections(), 4)
        })
    )

    it.scopedLive("a header name or value that may not be sent fails with http before connecting", () =>
      Effect.gen(function* () {
        const receiver = yield* serveRaw(() => ["HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"])
        const send = yield* sender()
        const refused: ReadonlyArray<readonly [Record<string, string>, string]> = [
          [{ Authorization: "Bearer x\r\nX-Injected: 1" }, "invalid Authorization header"],
          [{ "X-Ok": "1", "X Bad": "1" }, 'invalid header name "X Bad"'],
          [{ "Transfer-Encoding": "chunked" }, "invalid transfer-encoding header"]
        ]
        for (const [headers, message] of refused) {
          const result = yield* Effect.either(send.send(request(`http://127.0.0.1:${receiver.port}/`, { headers })))
          assert.strictEqual(reasonOf(result), "http")
          // The name, never the value (a secret, in an Authorization header).
          if (Either.isLeft(result))
            assert.strictEqual(result.left.message, `The request could not be built: ${message}`)
        }
        assert.strictEqual(receiver.connections(), 0)
      })
    )

    it.scopedLive("a Latin-1 header value goes as single bytes, as node:http sends it; the body stays UTF-8", () =>
      Effect.gen(function* () {
        const receiver = yield* serve((_, response) => response.writeHead(200).end())
        const send = yield* sender()
        const attempt = request(`http://127.0.0.1:${receiver.port}/`, { headers: { Authorization: "Bearer tökén" } })
        assert.deepStrictEqual(yield* send.send(attempt), { statusCode: 200 })
        assert.strictEqual(receiver.received[0]!.headers.authorization, "Bearer tökén")
        assert.isTrue(receiver.received[0]!.body.equals(Buffer.from(attempt.body, "utf8")))
      })
    )

    it.scopedLive("more attempts than connections allowed wait for a free one", () =>
      Effect.gen(function* () {
        const receiver = yield* serveRaw(() => ["HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"])
        const send = yield* sender({ maxSocketsPerHost: 2 })
        const url = `http://127.0.0.1:${receiver.port}/`
        const answers = yield* Effect.forEach(Array.from({ length: 8 }), () => send.send(request(url)), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(
          answers.map((answer) => answer.statusCode),
          Array.from({ length: 8 }, () => 200)
        )
        assert.strictEqual(receiver.connections(), 2)
      })
    )
  })

  it("classifies Node errors", () => {
    const coded = (code: string | undefined, syscall?: string) =>
      Object.assign(new Error("x"), code === undefined ? {} : { code }, syscall === undefined ? {} : { syscall })
    assert.strictEqual(classify(coded("ENOTFOUND", "getaddrinfo")), "dns")
    assert.strictEqual(classify(coded("EAI_AGAIN")), "dns")
    assert.strictEqual(classify(coded("ECONNREFUSED", "connect")), "connect")
    assert.strictEqual(classify(coded("ECONNRESET")), "connect")
    assert.strictEqual(classify(coded("EHOSTUNREACH")), "connect")
    assert.strictEqual(classify(coded("DEPTH_ZERO_SELF_SIGNED_CERT")), "tls")
    assert.strictEqual(classify(coded("ERR_TLS_CERT_ALTNAME_INVALID")), "tls")
    assert.strictEqual(classify(coded("CERT_HAS_EXPIRED")), "tls")
    assert.strictEqual(classify(coded("EPROTO")), "tls")
    assert.strictEqual(classify(coded("HPE_INVALID_CONSTANT")), "http")
    assert.strictEqual(classify(coded(undefined)), "connect")
    assert.strictEqual(
      classify(Object.assign(new AggregateError([coded("ECONNREFUSED")]), { errors: [coded("ECONNREFUSED")] })),
      "connect"
    )
  })

  it("classifies undici's errors, looking through their causes", () => {
    const coded = (code: string, syscall?: string) =>
      Object.assign(new Error("x"), { code }, syscall === undefined ? {} : { syscall })
    const causing = (error: Error, cause: Error) => Object.assign(error, { cause })
    // undici's parser error: (message, llhttp code) at run time.
    const ParserError = errors.HTTPParserError as unknown as new (message: string, code?: string) => Error
    assert.strictEqual(classify(new errors.SocketError("other side closed")), "connect")
    assert.strictEqual(classify(new errors.SocketError("bad response")), "http")
    assert.strictEqual(classify(new errors.ConnectTimeoutError()), "timeout")
    assert.strictEqual(classify(new errors.HeadersTimeoutError()), "timeout")
    assert.strictEqual(classify(new errors.InvalidArgumentError("invalid header key")), "http")
    assert.strictEqual(classify(new errors.ResponseContentLengthMismatchError()), "http")
    assert.strictEqual(
      classify(new ParserError("Response does not match the HTTP/1.1 protocol", "INVALID_CONSTANT")),
      "http"
    )
    assert.strictEqual(classify(new ParserError("Response does not match the HTTP/1.1 protocol")), "http")
    assert.strictEqual(classify(new errors.ClientDestroyedError()), "connect")
    // A wrapper says less than its cause.
    assert.strictEqual(classify(causing(new errors.SocketError("closed"), coded("ENOTFOUND", "getaddrinfo"))), "dns")
    assert.strictEqual(classify(causing(new errors.SocketError("closed"), coded("DEPTH_ZERO_SELF_SIGNED_CERT"))), "tls")
    assert.strictEqual(classify(causing(new TypeError("fetch failed"), coded("ERR_WAYBILL_SSRF_REFUSED"))), "ssrf")
    assert.strictEqual(classify(causing(new TypeError("fetch failed"), coded("ECONNREFUSED"))), "connect")
    assert.strictEqual(
      classify(causing(new TypeError("fetch failed"), causing(new errors.SocketError("closed"), coded("EPROTO")))),
      "tls"
    )
  })

  it.live("the resolver answers every address of a name, and nothing for an unknown one", () =>
    Effect.gen(function* () {
      const resolver = yield* HostResolver
      const local = yield* resolver.resolve("localhost")
      assert.isTrue(local.some((address) => address === "127.0.0.1" || address === "::1"))
      assert.deepStrictEqual(yield* resolver.resolve("no-such-host.invalid"), [])
    }).pipe(Effect.provide(layerResolver))
  )
})
