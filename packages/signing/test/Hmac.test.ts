import { createHmac } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Either, Redacted } from "effect"
import * as fc from "fast-check"
import * as Hmac from "../src/Hmac.js"
import type * as VerificationError from "../src/VerificationError.js"

const secret = "whk-test-secret-0123456789"
const timestamp = 1_798_000_000
const body = '{"id":"evt_1","type":"tour-created","createdAt":1798000000,"payload":{"tour":{"id":"tour_1"}}}'

const headersFor = (sec: Hmac.Secret, ts: number, raw: Hmac.RawBody) => ({ ...Hmac.signatureHeaders(sec, ts, raw) })

const errorOf = <A>(result: Either.Either<A, VerificationError.SignatureError>): VerificationError.SignatureError => {
  if (Either.isRight(result)) return assert.fail("expected the verification to fail")
  return result.left
}

describe("Hmac.sign", () => {
  it("is the lowercase hex HMAC-SHA256 of <timestamp>.<body>", () => {
    const expected = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")
    assert.strictEqual(Hmac.sign(secret, timestamp, body), expected)
    assert.match(Hmac.sign(secret, timestamp, body), /^[0-9a-f]{64}$/)
  })

  it("signs a string body as its UTF-8 bytes", () => {
    const text = '{"text":"Köln – 5 °C 🚚"}'
    const bytes = new TextEncoder().encode(text)
    assert.strictEqual(Hmac.sign(secret, timestamp, text), Hmac.sign(secret, timestamp, bytes))
    const utf8 = createHmac("sha256", secret)
      .update(Buffer.concat([Buffer.from(`${timestamp}.`), Buffer.from(text, "utf8")]))
      .digest("hex")
    const latin1 = createHmac("sha256", secret)
      .update(Buffer.from(`${timestamp}.${text}`, "latin1"))
      .digest("hex")
    assert.strictEqual(Hmac.sign(secret, timestamp, text), utf8)
    assert.notStrictEqual(Hmac.sign(secret, timestamp, text), latin1)
  })

  it("takes a Redacted or a byte secret like the same text", () => {
    const expected = Hmac.sign(secret, timestamp, body)
    assert.strictEqual(Hmac.sign(Redacted.make(secret), timestamp, body), expected)
    assert.strictEqual(Hmac.sign(new TextEncoder().encode(secret), timestamp, body), expected)
  })

  it("builds the three headers", () => {
    assert.deepStrictEqual(Hmac.signatureHeaders(secret, timestamp, body), {
      "X-Signature-Algorithm": "hmac-sha256",
      "X-Signature-Timestamp": "1798000000",
      "X-Signature": Hmac.sign(secret, timestamp, body)
    })
  })

  it("refuses an empty secret and a timestamp that is not whole epoch seconds", () => {
    assert.throws(() => Hmac.sign("", timestamp, body), RangeError)
    assert.throws(() => Hmac.sign(new Uint8Array(0), timestamp, body), RangeError)
    assert.throws(() => Hmac.sign(Redacted.make(""), timestamp, body), RangeError)
    for (const bad of [1.5, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60]) {
      assert.throws(() => Hmac.sign(secret, bad, body), RangeError)
    }
  })

  it("never puts the secret into an error message", () => {
    try {
      Hmac.sign(secret, 1.5, body)
      assert.fail("expected a throw")
    } catch (error) {
      assert.notInclude(String(error), secret)
    }
  })
})

describe("Hmac.verify", () => {
  const verifyAt = (headers: Hmac.HeadersInput, now: number, raw: Hmac.RawBody = body, tolerance?: number) =>
    Hmac.verify({ secret, headers, rawBody: raw, now, toleranceSeconds: tolerance })

  it("accepts what sign produced and reports the timestamp", () => {
    assert.deepStrictEqual(
      verifyAt(headersFor(secret, timestamp, body), timestamp),
      Either.right({
        method: "hmac",
        timestamp
      })
    )
  })

  it("round-trips any secret, timestamp and body, as text or bytes, with Fetch or Node headers", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ minLength: 1, unit: "grapheme" }), fc.uint8Array({ minLength: 1, maxLength: 64 })),
        fc.integer({ min: 0, max: 99_999_999_999 }),
        fc.oneof(fc.string({ unit: "binary" }), fc.uint8Array({ maxLength: 2048 })),
        fc.integer({ min: -300, max: 300 }),
        fc.boolean(),
        (sec, ts, raw, skew, fetchHeaders) => {
          const signed = Hmac.signatureHeaders(sec, ts, raw)
          const headers = fetchHeaders ? new Headers(signed) : { ...signed }
          const result = Hmac.verify({ secret: sec, headers, rawBody: raw, now: ts + skew })
          return Either.isRight(result) && result.right.timestamp === ts
        }
      )
    )
  })

  it("refuses a body with any byte changed", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 512 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (raw, at, flip) => {
          const headers = headersFor(secret, timestamp, raw)
          const tampered = Uint8Array.from(raw)
          tampered[at % raw.length] ^= flip
          return errorOf(verifyAt(headers, timestamp, tampered))._tag === "SignatureMismatch"
        }
      )
    )
  })

  it("refuses a tampered body, secret or timestamp", () => {
    const headers = headersFor(secret, timestamp, body)
    assert.strictEqual(
      errorOf(verifyAt(headers, timestamp, body.replace("tour_1", "tour_2")))._tag,
      "SignatureMismatch"
    )
    assert.strictEqual(errorOf(verifyAt(headers, timestamp, `${body} `))._tag, "SignatureMismatch")
    assert.strictEqual(
      errorOf(Hmac.verify({ secret: `${secret}x`, headers, rawBody: body, now: timestamp }))._tag,
      "SignatureMismatch"
    )
    // A fresher timestamp inside the window does not help a replay: it is signed too.
    const moved = { ...headers, "X-Signature-Timestamp": String(timestamp + 1) }
    assert.strictEqual(errorOf(verifyAt(moved, timestamp))._tag, "SignatureMismatch")
    const padded = { ...headers, "X-Signature-Timestamp": `0${timestamp}` }
    assert.strictEqual(errorOf(verifyAt(padded, timestamp))._tag, "SignatureMismatch")
  })

  it("applies the replay window in both directions, bounds included", () => {
    const headers = headersFor(secret, timestamp, body)
    assert.isTrue(Either.isRight(verifyAt(headers, timestamp + 299)))
    assert.isTrue(Either.isRight(verifyAt(headers, timestamp - 299)))
    assert.isTrue(Either.isRight(verifyAt(headers, timestamp + 300)))
    assert.isTrue(Either.isRight(verifyAt(headers, timestamp - 300)))
    const old = errorOf(verifyAt(headers, timestamp + 301))
    assert.strictEqual(old._tag, "TimestampTooOld")
    assert.deepInclude(old, { timestamp, now: timestamp + 301, toleranceSeconds: 300 })
    const early = errorOf(verifyAt(headers, timestamp - 301))
    assert.strictEqual(early._tag, "TimestampTooNew")
    assert.deepInclude(early, { timestamp, now: timestamp - 301, toleranceSeconds: 300 })
  })

  it("honours a custom tolerance, down to zero", () => {
    const headers = headersFor(secret, timestamp, body)
    assert.isTrue(Either.isRight(verifyAt(headers, timestamp, body, 0)))
    assert.strictEqual(errorOf(verifyAt(headers, timestamp + 1, body, 0))._tag, "TimestampTooOld")
    assert.isTrue(Either.isRight(verifyAt(headers, timestamp + 3600, body, 3600)))
    assert.strictEqual(errorOf(verifyAt(headers, timestamp - 3601, body, 3600))._tag, "TimestampTooNew")
  })

  it("checks the signature before the window, so a forged stale request is a mismatch", () => {
    const headers = { ...headersFor(secret, timestamp, body), "X-Signature": "0".repeat(64) }
    assert.strictEqual(errorOf(verifyAt(headers, timestamp + 10_000))._tag, "SignatureMismatch")
  })

  it("names each missing header", () => {
    const full = headersFor(secret, timestamp, body)
    for (const name of ["X-Signature", "X-Signature-Algorithm", "X-Signature-Timestamp"] as const) {
      const { [name]: _dropped, ...rest } = full
      const error = errorOf(verifyAt(rest, timestamp))
      assert.strictEqual(error._tag, "MissingHeader")
      assert.deepInclude(error, { header: name })
      const blank = errorOf(verifyAt({ ...full, [name]: "  " }, timestamp))
      assert.strictEqual(blank._tag, "MissingHeader")
    }
    assert.deepInclude(errorOf(verifyAt({}, timestamp)), { _tag: "MissingHeader", header: "X-Signature" })
  })

  it("refuses malformed timestamps and signatures", () => {
    const full = headersFor(secret, timestamp, body)
    for (const bad of ["abc", "-5", "1.5", "1e9", "1798000000 1", "1234567890123456"]) {
      const error = errorOf(verifyAt({ ...full, "X-Signature-Timestamp": bad }, timestamp))
      assert.deepInclude(error, { _tag: "MalformedHeader", header: "X-Signature-Timestamp" })
    }
    const signature = full["X-Signature"]
    const middle = `${signature.slice(0, 30)}g${signature.slice(31)}`
    const unicode = `${signature.slice(0, 63)}é`
    for (const bad of [
      signature.slice(1),
      `${signature}0`,
      `sha256=${signature}`,
      `${signature.slice(2)}zz`,
      middle,
      unicode
    ]) {
      const error = errorOf(verifyAt({ ...full, "X-Signature": bad }, timestamp))
      assert.deepInclude(error, { _tag: "MalformedHeader", header: "X-Signature" })
    }
  })

  it("accepts upper-case hex digits and header names in any case", () => {
    const full = headersFor(secret, timestamp, body)
    const shouting = {
      "x-signature-algorithm": "HMAC-SHA256",
      "X-SIGNATURE-TIMESTAMP": full["X-Signature-Timestamp"],
      "x-Signature": full["X-Signature"].toUpperCase()
    }
    assert.isTrue(Either.isRight(verifyAt(shouting, timestamp)))
  })

  it("refuses an unknown algorithm", () => {
    const full = headersFor(secret, timestamp, body)
    const error = errorOf(verifyAt({ ...full, "X-Signature-Algorithm": "hmac-sha512" }, timestamp))
    assert.deepInclude(error, { _tag: "UnsupportedAlgorithm", algorithm: "hmac-sha512" })
    const long = errorOf(verifyAt({ ...full, "X-Signature-Algorithm": "x".repeat(1000) }, timestamp))
    assert.deepInclude(long, { _tag: "UnsupportedAlgorithm", algorithm: "x".repeat(64) })
  })

  it("refuses a header sent twice, from Node or from Fetch", () => {
    const full = headersFor(secret, timestamp, body)
    const node = { ...full, "x-signature": [full["X-Signature"], full["X-Signature"]] }
    const { "X-Signature": _dropped, ...rest } = node
    assert.deepInclude(errorOf(verifyAt(rest, timestamp)), { _tag: "MalformedHeader", header: "X-Signature" })
    const fetch = new Headers(full)
    fetch.append("X-Signature-Timestamp", String(timestamp))
    assert.deepInclude(errorOf(verifyAt(fetch, timestamp)), {
      _tag: "MalformedHeader",
      header: "X-Signature-Timestamp"
    })
    // A one-element array, as some frameworks give, is fine.
    const single = { ...full, "X-Signature": [full["X-Signature"]] }
    assert.isTrue(Either.isRight(verifyAt(single, timestamp)))
  })

  it("refuses configuration errors by throwing", () => {
    const headers = headersFor(secret, timestamp, body)
    assert.throws(() => Hmac.verify({ secret: "", headers, rawBody: body, now: timestamp }), RangeError)
    assert.throws(() => Hmac.verify({ secret, headers, rawBody: body, now: Number.NaN }), RangeError)
    assert.throws(() => verifyAt(headers, timestamp, body, -1), RangeError)
  })

  it("keeps the secret and the expected signature out of every error", () => {
    const full = headersFor(secret, timestamp, body)
    const errors = [
      errorOf(verifyAt({ ...full, "X-Signature": "0".repeat(64) }, timestamp)),
      errorOf(verifyAt(full, timestamp + 1000)),
      errorOf(verifyAt(full, timestamp - 1000)),
      errorOf(verifyAt({ ...full, "X-Signature-Algorithm": "md5" }, timestamp)),
      errorOf(verifyAt({ ...full, "X-Signature": "nope" }, timestamp))
    ]
    for (const error of errors) {
      const printed = `${String(error)} ${error.message} ${JSON.stringify(error)}`
      assert.notInclude(printed, secret)
      assert.notInclude(printed, full["X-Signature"])
      assert.isAbove(error.message.length, 10)
    }
  })
})
