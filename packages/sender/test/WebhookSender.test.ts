import { assert, describe, it } from "@effect/vitest"
import { HostResolver } from "@waybill/webhooks/HostResolver"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { errors } from "undici"
import { classify, layerResolver, make, type Options } from "../src/WebhookSender.js"
import { type Resolve, senderContract } from "./contract.js"
import { cert, reasonOf, request, serve, serveRaw } from "./receivers.js"

// A resolver in `dns.lookup`'s shape, answering what `resolve` says.
const lookupOf = (resolve: Resolve) =>
  ((host: string, options: { all?: boolean }, callback: (...args: Array<unknown>) => void) => {
    const answer = resolve(host)
    if (answer === "silent") return
    const addresses = answer.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
    if (options.all === true) callback(null, addresses)
    else callback(null, addresses[0]!.address, addresses[0]!.family)
  }) as unknown as Options["lookup"]

const sender = (options: Partial<Options> = {}) => make({ allowPrivateTargets: true, ...options })

senderContract("WebhookSender (undici)", ({ allowPrivateTargets, resolve }) =>
  make({ allowPrivateTargets, lookup: resolve === undefined ? undefined : lookupOf(resolve) })
)

describe("WebhookSender", () => {
  it.scopedLive("keeps a connection alive for the next attempt", () =>
    Effect.gen(function* () {
      const receiver = yield* serve((_, response) => response.writeHead(204).end())
      const send = yield* sender()
      const attempt = request(`http://127.0.0.1:${receiver.port}/`)
      yield* send.send(attempt)
      yield* send.send(attempt)
      assert.strictEqual(receiver.connections(), 1)
    })
  )

  it.scopedLive("checks the address a name resolves to when connecting (DNS rebinding), with its own lookup", () =>
    Effect.gen(function* () {
      const receiver = yield* serve((_, response) => response.writeHead(200).end())
      // The resolver the sender connects with answers loopback: refused at connect time.
      const send = yield* sender({ allowPrivateTargets: false, lookup: lookupOf(() => ["127.0.0.1"]) })
      const result = yield* Effect.either(send.send(request(`http://hooks.example.test:${receiver.port}/`)))
      assert.strictEqual(reasonOf(result), "ssrf")
      assert.strictEqual(receiver.connections(), 0)
      // The same resolver with private targets allowed does reach the receiver.
      const allowed = yield* sender({ allowPrivateTargets: true, lookup: lookupOf(() => ["127.0.0.1"]) })
      assert.deepStrictEqual(yield* allowed.send(request(`http://hooks.example.test:${receiver.port}/`)), {
        statusCode: 200
      })
      assert.strictEqual(receiver.received.length, 1)
    })
  )

  it.scopedLive("https: extra certificate authorities are trusted beside the system's", () =>
    Effect.gen(function* () {
      const receiver = yield* serve((_, response) => response.writeHead(201).end(), true)
      const trusting = yield* sender({ ca: cert })
      assert.deepStrictEqual(yield* trusting.send(request(`https://127.0.0.1:${receiver.port}/`)), {
        statusCode: 201
      })
      assert.strictEqual(receiver.received.length, 1)
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
