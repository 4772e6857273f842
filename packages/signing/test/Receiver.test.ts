import { Readable } from "node:stream"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import * as Authorization from "../src/Authorization.js"
import * as Hmac from "../src/Hmac.js"
import * as Receiver from "../src/Receiver.js"
import * as VerificationError from "../src/VerificationError.js"

const secret = "whk-test-secret-0123456789"
const timestamp = 1_798_000_000
const body = '{"id":"evt_1","type":"comment-created","createdAt":1798000000,"payload":{"text":"Köln 🚚"}}'

const signedRequest = (raw: string = body, extra: Record<string, string> = {}) =>
  new Request("http://receiver.test/hooks", {
    method: "POST",
    headers: { "content-type": "application/json", ...Hmac.signatureHeaders(secret, timestamp, raw), ...extra },
    body: raw
  })

const incoming = (chunks: ReadonlyArray<string | Uint8Array>, headers: Record<string, string | Array<string>>) =>
  Object.assign(Readable.from(chunks), { headers })

const atSeconds = (seconds: number) => TestClock.setTime(seconds * 1000)

describe("Receiver.authenticate", () => {
  it("dispatches on the configured method", () => {
    const hmac = Receiver.authenticate(
      { type: "hmac", secret },
      { headers: Hmac.signatureHeaders(secret, timestamp, body), rawBody: body, now: timestamp }
    )
    assert.deepStrictEqual(hmac, Either.right({ method: "hmac", timestamp }))
    const basic = Receiver.authenticate(
      { type: "basic", username: "ops", password: "pw" },
      { headers: { authorization: Authorization.basicAuthorization("ops", "pw") }, rawBody: body, now: 0 }
    )
    assert.deepStrictEqual(basic, Either.right({ method: "basic", username: "ops" }))
    const bearer = Receiver.authenticate(
      { type: "bearer", token: "tok" },
      { headers: { authorization: "Bearer nope" }, rawBody: body, now: 0 }
    )
    assert.isTrue(Either.isLeft(bearer) && bearer.left._tag === "CredentialsMismatch")
  })
})

describe("Receiver.verifyRequest", () => {
  it.effect("reads the body once and hands it back with the verdict, at the Clock's time", () =>
    Effect.gen(function* () {
      yield* atSeconds(timestamp + 299)
      const request = signedRequest()
      const received = yield* Receiver.verifyRequest(request, secret)
      assert.deepStrictEqual(received.verified, { method: "hmac", timestamp })
      assert.strictEqual(received.text, body)
      assert.deepStrictEqual(Buffer.from(received.rawBody), Buffer.from(body, "utf8"))
      assert.isTrue(request.bodyUsed)
      assert.deepStrictEqual(JSON.parse(received.text).payload.text, "Köln 🚚")
    })
  )

  it.effect("refuses a stale delivery, a tampered body and a re-read body", () =>
    Effect.gen(function* () {
      yield* atSeconds(timestamp + 301)
      const stale = yield* Effect.flip(Receiver.verifyRequest(signedRequest(), secret))
      assert.strictEqual(stale._tag, "TimestampTooOld")
      yield* atSeconds(timestamp - 301)
      const early = yield* Effect.flip(Receiver.verifyRequest(signedRequest(), secret))
      assert.strictEqual(early._tag, "TimestampTooNew")
      yield* atSeconds(timestamp)
      const headers = Hmac.signatureHeaders(secret, timestamp, body)
      const tampered = new Request("http://receiver.test/hooks", {
        method: "POST",
        headers,
        body: body.replace("Köln", "Koln")
      })
      assert.strictEqual((yield* Effect.flip(Receiver.verifyRequest(tampered, secret)))._tag, "SignatureMismatch")
      const used = signedRequest()
      yield* Effect.promise(() => used.text())
      const unreadable = yield* Effect.flip(Receiver.verifyRequest(used, secret))
      assert.strictEqual(unreadable._tag, "BodyUnreadable")
      assert.strictEqual(VerificationError.httpStatus(unreadable), 400)
    })
  )

  it.effect("respects the tolerance option", () =>
    Effect.gen(function* () {
      yield* atSeconds(timestamp + 30)
      const error = yield* Effect.flip(Receiver.verifyRequest(signedRequest(), secret, { toleranceSeconds: 10 }))
      assert.strictEqual(error._tag, "TimestampTooOld")
    })
  )

  it.effect("refuses bodies over the limit, declared or streamed", () =>
    Effect.gen(function* () {
      yield* atSeconds(timestamp)
      const declared = yield* Effect.flip(Receiver.verifyRequest(signedRequest(), secret, { maxBodyBytes: 10 }))
      assert.deepInclude(declared, { _tag: "BodyTooLarge", maxBytes: 10 })
      assert.strictEqual(VerificationError.httpStatus(declared), 413)
      const bytes = new TextEncoder().encode(body)
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, 20))
          controller.enqueue(bytes.slice(20))
          controller.close()
        }
      })
      const streamed = new Request("http://receiver.test/hooks", {
        method: "POST",
        headers: Hmac.signatureHeaders(secret, timestamp, body),
        body: stream,
        duplex: "half"
      } as RequestInit & { duplex: "half" })
      const error = yield* Effect.flip(Receiver.verifyRequest(streamed, secret, { maxBodyBytes: 30 }))
      assert.strictEqual(error._tag, "BodyTooLarge")
      // Exactly at the limit is fine.
      const exact = yield* Receiver.verifyRequest(signedRequest(), secret, { maxBodyBytes: bytes.byteLength })
      assert.strictEqual(exact.text, body)
    })
  )

  it.effect("checks Basic and Bearer before reading the body", () =>
    Effect.gen(function* () {
      const request = new Request("http://receiver.test/hooks", {
        method: "POST",
        headers: { authorization: "Bearer wrong" },
        body
      })
      const error = yield* Effect.flip(Receiver.authenticateRequest(request, { type: "bearer", token: "right" }))
      assert.strictEqual(error._tag, "CredentialsMismatch")
      assert.isFalse(request.bodyUsed)
      const good = new Request("http://receiver.test/hooks", {
        method: "POST",
        headers: { authorization: Authorization.basicAuthorization("ops", "pw") },
        body
      })
      const received = yield* Receiver.authenticateRequest(good, { type: "basic", username: "ops", password: "pw" })
      assert.deepStrictEqual(received.verified, { method: "basic", username: "ops" })
      assert.strictEqual(received.text, body)
    })
  )
})

describe("Receiver.verifyIncomingMessage", () => {
  it.effect("verifies a Node message whose body arrives in chunks, split inside a UTF-8 sequence", () =>
    Effect.gen(function* () {
      yield* atSeconds(timestamp - 299)
      const bytes = Buffer.from(body, "utf8")
      const cut = body.indexOf("ö") + 1 // the middle of the two bytes of "ö"
      const headers = Object.fromEntries(
        Object.entries(Hmac.signatureHeaders(secret, timestamp, body)).map(([k, v]) => [k.toLowerCase(), v])
      )
      const message = incoming([bytes.subarray(0, cut), bytes.subarray(cut)], headers)
      const received = yield* Receiver.verifyIncomingMessage(message, secret)
      assert.strictEqual(received.text, body)
      assert.deepStrictEqual(received.verified, { method: "hmac", timestamp })
    })
  )

  it.effect("accepts text chunks and refuses an oversized or failing stream", () =>
    Effect.gen(function* () {
      yield* atSeconds(timestamp)
      const headers = { ...Hmac.signatureHeaders(secret, timestamp, body) }
      const text = yield* Receiver.verifyIncomingMessage(incoming([body.slice(0, 5), body.slice(5)], headers), secret)
      assert.strictEqual(text.text, body)
      const big = yield* Effect.flip(
        Receiver.verifyIncomingMessage(incoming([body, body], headers), secret, { maxBodyBytes: 100 })
      )
      assert.strictEqual(big._tag, "BodyTooLarge")
      const declared = yield* Effect.flip(
        Receiver.verifyIncomingMessage(incoming([], { ...headers, "content-length": "999999999" }), secret)
      )
      assert.strictEqual(declared._tag, "BodyTooLarge")
      const failing = Object.assign(
        new Readable({
          read() {
            this.destroy(new Error("aborted"))
          }
        }),
        { headers }
      )
      const broken = yield* Effect.flip(Receiver.verifyIncomingMessage(failing, secret))
      assert.deepInclude(broken, { _tag: "BodyUnreadable", reason: "aborted" })
    })
  )
})
