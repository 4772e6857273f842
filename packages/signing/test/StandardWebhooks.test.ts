import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Redacted } from "effect"
import * as fc from "fast-check"
import { Webhook } from "standardwebhooks"
import * as Receiver from "../src/Receiver.js"
import * as StandardWebhooks from "../src/StandardWebhooks.js"

const secret = `whsec_${Buffer.from("waybill-standard-webhooks-key!!!").toString("base64")}`
const id = "dlv_01m88z9wqs0x723e9vzm1jejf5"
const timestamp = 1_798_000_000
const body = '{"id":"evt_1","type":"tour-created","createdAt":1798000000,"payload":{"tour":{"id":"tour_1"}}}'

describe("StandardWebhooks", () => {
  it("accepts whsec_ secrets of 24 to 64 bytes of base64 only", () => {
    const of = (bytes: number) => `whsec_${randomBytes(bytes).toString("base64")}`
    assert.isTrue(StandardWebhooks.isSecret(of(24)))
    assert.isTrue(StandardWebhooks.isSecret(of(64)))
    assert.isTrue(StandardWebhooks.isSecret(Redacted.make(of(32))))
    assert.isFalse(StandardWebhooks.isSecret(of(23)))
    assert.isFalse(StandardWebhooks.isSecret(of(65)))
    assert.isFalse(StandardWebhooks.isSecret(of(32).slice("whsec_".length)))
    assert.isFalse(StandardWebhooks.isSecret("whsec_not base64 at all, no no no no no"))
    assert.isFalse(StandardWebhooks.isSecret(`whsec_${randomBytes(32).toString("base64url").replace(/=/g, "")}-_`))
  })

  it("signs exactly as the official standardwebhooks library", () => {
    const official = new Webhook(secret)
    assert.strictEqual(
      StandardWebhooks.sign(secret, id, timestamp, body),
      official.sign(id, new Date(timestamp * 1000), body)
    )
  })

  it("what it signs, the official library verifies; with another secret it refuses", () => {
    const now = Math.floor(Date.now() / 1000)
    const headers = StandardWebhooks.signatureHeaders(secret, id, now, body)
    assert.deepStrictEqual(new Webhook(secret).verify(body, headers), JSON.parse(body))
    const other = `whsec_${randomBytes(32).toString("base64")}`
    assert.throws(() => new Webhook(other).verify(body, headers))
  })

  it("verifies what the official library signs, for any body; a changed body or id fails", () => {
    fc.assert(
      fc.property(fc.string(), fc.uint8Array({ minLength: 24, maxLength: 64 }), (text, key) => {
        const keySecret = `whsec_${Buffer.from(key).toString("base64")}`
        const signature = new Webhook(keySecret).sign(id, new Date(timestamp * 1000), text)
        const headers = { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signature }
        const verified = StandardWebhooks.verify({ secret: keySecret, headers, rawBody: text, now: timestamp })
        assert.deepStrictEqual(verified, Either.right({ method: "standard-webhooks", id, timestamp }))
        const changed = StandardWebhooks.verify({ secret: keySecret, headers, rawBody: `${text}x`, now: timestamp })
        assert.isTrue(Either.isLeft(changed))
        const otherId = { ...headers, "webhook-id": `${id}x` }
        assert.isTrue(
          Either.isLeft(StandardWebhooks.verify({ secret: keySecret, headers: otherId, rawBody: text, now: timestamp }))
        )
      }),
      { numRuns: 200 }
    )
  })

  it("accepts any matching v1 signature among several, refuses stale timestamps and missing headers", () => {
    const headers = StandardWebhooks.signatureHeaders(secret, id, timestamp, body)
    const rotated = { ...headers, "webhook-signature": `v1,AAAA v2,zzz ${headers["webhook-signature"]}` }
    assert.isTrue(Either.isRight(StandardWebhooks.verify({ secret, headers: rotated, rawBody: body, now: timestamp })))
    const stale = StandardWebhooks.verify({ secret, headers, rawBody: body, now: timestamp + 301 })
    assert.strictEqual(Either.isLeft(stale) && stale.left._tag, "TimestampTooOld")
    const future = StandardWebhooks.verify({ secret, headers, rawBody: body, now: timestamp - 301 })
    assert.strictEqual(Either.isLeft(future) && future.left._tag, "TimestampTooNew")
    const missing = StandardWebhooks.verify({
      secret,
      headers: { "webhook-id": id, "webhook-timestamp": String(timestamp) },
      rawBody: body,
      now: timestamp
    })
    assert.strictEqual(Either.isLeft(missing) && missing.left._tag, "MissingHeader")
    assert.throws(() => StandardWebhooks.sign("not-a-whsec-secret", id, timestamp, body), /whsec_/)
  })

  it.live("the receiver kit verifies a Fetch request in the standard-webhooks scheme", () =>
    Effect.gen(function* () {
      const now = Math.floor(Date.now() / 1000)
      const request = new Request("http://127.0.0.1/hook", {
        method: "POST",
        headers: { "content-type": "application/json", ...StandardWebhooks.signatureHeaders(secret, id, now, body) },
        body
      })
      const received = yield* Receiver.authenticateRequest(request, {
        type: "hmac",
        secret: Redacted.make(secret),
        scheme: "standard-webhooks"
      })
      assert.strictEqual(received.text, body)
      assert.deepStrictEqual(received.verified, { method: "standard-webhooks", id, timestamp: now })
      // The same request under the Waybill scheme lacks its headers.
      const again = new Request("http://127.0.0.1/hook", {
        method: "POST",
        headers: StandardWebhooks.signatureHeaders(secret, id, now, body),
        body
      })
      const refused = yield* Effect.flip(Receiver.authenticateRequest(again, { type: "hmac", secret }))
      assert.strictEqual(refused._tag, "MissingHeader")
    })
  )
})
