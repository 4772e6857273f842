/**
 * What every `HttpSender` of this package does, run against each: the body and headers as given
 * and the status as answered; the SSRF rules before connecting; one deadline, the name's lookup
 * included; no redirect followed; the error classes; at most 4 KiB of an answer read; an
 * interrupted attempt aborted.
 */
import { assert, describe, it } from "@effect/vitest"
import type { HttpSender } from "@waybill/webhooks/HttpSender"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import { reasonOf, request, serve } from "./receivers.js"

/**
 * How a test names addresses for a host: a list, or `"silent"` for a resolver that never answers.
 * Without one, the system resolver.
 */
export type Resolve = (host: string) => ReadonlyArray<string> | "silent"

/** A sender to test, built with the given settings. */
export type MakeSender = (options: {
  readonly allowPrivateTargets: boolean
  readonly resolve?: Resolve | undefined
}) => Effect.Effect<HttpSender["Type"], never, Scope.Scope>

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** The contract, as a `describe` block of its own. */
export const senderContract = (name: string, makeSender: MakeSender) =>
  describe(`${name}: the sender contract`, () => {
    const sender = (allowPrivateTargets = true, resolve?: Resolve) => makeSender({ allowPrivateTargets, resolve })

    it.scopedLive("posts the body bytes unchanged with the given headers and answers the status", () =>
      Effect.gen(function* () {
        const receiver = yield* serve((_, response) => response.writeHead(204).end())
        const send = yield* sender()
        const attempt = request(`http://127.0.0.1:${receiver.port}/hooks/waybill?x=1`)
        assert.deepStrictEqual(yield* send.send(attempt), { statusCode: 204 })
        const [got] = receiver.received
        assert.strictEqual(got!.method, "POST")
        assert.strictEqual(got!.url, "/hooks/waybill?x=1")
        assert.isTrue(got!.body.equals(Buffer.from(attempt.body, "utf8")))
        assert.strictEqual(got!.headers["content-length"], String(Buffer.byteLength(attempt.body, "utf8")))
        assert.strictEqual(got!.headers["content-type"], "application/json")
        assert.strictEqual(got!.headers["x-delivery-id"], "dlv_1")
        assert.strictEqual(got!.headers["x-delivery-attempt"], "1")
      })
    )

    it.scopedLive("refuses loopback targets unless private targets are allowed, before connecting", () =>
      Effect.gen(function* () {
        const receiver = yield* serve((_, response) => response.writeHead(200).end())
        const send = yield* sender(false)
        for (const url of [
          `http://127.0.0.1:${receiver.port}/`,
          `http://[::ffff:127.0.0.1]:${receiver.port}/`,
          `http://localhost:${receiver.port}/`,
          `https://127.0.0.1:${receiver.port}/`
        ]) {
          const result = yield* Effect.either(send.send(request(url)))
          assert.strictEqual(reasonOf(result), "ssrf", url)
          if (Either.isLeft(result)) assert.include(result.left.message, "WAYBILL_ALLOW_PRIVATE_TARGETS=true", url)
        }
        assert.strictEqual(receiver.connections(), 0)
        const allowed = yield* sender(true)
        assert.deepStrictEqual(yield* allowed.send(request(`http://localhost:${receiver.port}/`)), { statusCode: 200 })
      })
    )

    it.scopedLive("refuses a name that resolves to a refused address, naming the address", () =>
      Effect.gen(function* () {
        const receiver = yield* serve((_, response) => response.writeHead(200).end())
        const send = yield* sender(false, () => ["93.184.215.14", "127.0.0.1"])
        const result = yield* Effect.either(send.send(request(`http://hooks.example.test:${receiver.port}/`)))
        assert.strictEqual(reasonOf(result), "ssrf")
        if (Either.isLeft(result)) assert.include(result.left.message, "127.0.0.1")
        assert.strictEqual(receiver.connections(), 0)
      })
    )

    it.scopedLive("refuses URLs it cannot send to: no parse, another scheme", () =>
      Effect.gen(function* () {
        const send = yield* sender()
        for (const url of ["not a url", "ftp://127.0.0.1/hook", "file:///etc/passwd"]) {
          assert.strictEqual(reasonOf(yield* Effect.either(send.send(request(url)))), "connect", url)
        }
      })
    )

    it.scopedLive("fails with timeout when the answer does not come within the deadline", () =>
      Effect.gen(function* () {
        const receiver = yield* serve((_, response) => {
          setTimeout(() => response.writeHead(200).end(), 3_000).unref()
        })
        const send = yield* sender()
        const result = yield* Effect.either(
          send.send(request(`http://127.0.0.1:${receiver.port}/`, { timeoutMs: 200 }))
        )
        assert.strictEqual(reasonOf(result), "timeout")
        if (Either.isLeft(result)) assert.strictEqual(result.left.message, "No response within 200 ms")
        assert.strictEqual(receiver.received.length, 1)
      })
    )

    it.scopedLive("the deadline covers the lookup: a resolver that never answers is a timeout", () =>
      Effect.gen(function* () {
        const send = yield* sender(false, () => "silent")
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
        assert.strictEqual(
          reasonOf(yield* Effect.either(send.send(request(`http://127.0.0.1:${closed.port}/`)))),
          "connect"
        )
        assert.strictEqual(reasonOf(yield* Effect.either(send.send(request("http://no-such-host.invalid/")))), "dns")
        const vetted = yield* sender(false)
        assert.strictEqual(reasonOf(yield* Effect.either(vetted.send(request("http://no-such-host.invalid/")))), "dns")
      })
    )

    it.scopedLive("https: a certificate nobody trusts fails with tls", () =>
      Effect.gen(function* () {
        const receiver = yield* serve((_, response) => response.writeHead(201).end(), true)
        const send = yield* sender()
        const result = yield* Effect.either(send.send(request(`https://127.0.0.1:${receiver.port}/`)))
        assert.strictEqual(reasonOf(result), "tls")
        assert.strictEqual(receiver.received.length, 0)
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
        while (receiver.closed.length === 0) yield* sleep(5)
        assert.deepStrictEqual(receiver.closed, ["/"])
      })
    )

    it.scopedLive("an answer whose body comes slowly is still an answer at the deadline", () =>
      Effect.gen(function* () {
        const receiver = yield* serve((_, response) => {
          response.writeHead(200, { "Content-Type": "text/plain" })
          response.write("a little")
        })
        const send = yield* sender()
        const attempt = request(`http://127.0.0.1:${receiver.port}/`, { timeoutMs: 300 })
        assert.deepStrictEqual(yield* send.send(attempt), { statusCode: 200 })
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
        while (receiver.received.length === 0) yield* sleep(5)
        yield* Fiber.interrupt(fiber)
        while (receiver.closed.length === 0) yield* sleep(5)
        assert.deepStrictEqual(receiver.closed, ["/slow"])
      })
    )
  })
