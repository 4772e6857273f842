/**
 * Secret rotation on both sides (contract §8 "Secret rotation"): during an overlap the service
 * signs with the new and the previous secret (`X-Signature: <new>, <previous>`;
 * `webhook-signature: v1,<new> v1,<previous>`), and the receiver kit accepts a delivery made
 * with any of the secrets it is given, for every method.
 */
import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Either, Redacted } from "effect"
import * as fc from "fast-check"
import { Webhook } from "standardwebhooks"
import * as Authorization from "../src/Authorization.js"
import * as Hmac from "../src/Hmac.js"
import * as Receiver from "../src/Receiver.js"
import * as StandardWebhooks from "../src/StandardWebhooks.js"

const timestamp = 1_798_000_000
const body = '{"id":"evt_1","type":"tour-created","createdAt":1798000000,"payload":{"tour":{"id":"tour_1"}}}'
const oldSecret = "rotation-old-secret-0001"
const newSecret = "rotation-new-secret-0002"
const stranger = "rotation-stranger-secret-03"
const whsec = () => `whsec_${randomBytes(32).toString("base64")}`

const tagOf = <A, E extends { readonly _tag: string }>(result: Either.Either<A, E>): string =>
  Either.isLeft(result) ? result.left._tag : "Right"

describe("Hmac with several secrets", () => {
  it("signs with each secret in order, the signatures separated by a comma and a space", () => {
    const headers = Hmac.signatureHeaders([newSecret, Redacted.make(oldSecret)], timestamp, body)
    assert.strictEqual(
      headers["X-Signature"],
      `${Hmac.sign(newSecret, timestamp, body)}, ${Hmac.sign(oldSecret, timestamp, body)}`
    )
    assert.deepStrictEqual(
      Hmac.signatureHeaders([newSecret], timestamp, body),
      Hmac.signatureHeaders(newSecret, timestamp, body)
    )
    assert.throws(() => Hmac.signatureHeaders([], timestamp, body), RangeError)
  })

  it("a two-signature header verifies with either secret, or both, and not with a stranger's", () => {
    const headers = Hmac.signatureHeaders([newSecret, oldSecret], timestamp, body)
    const verify = (secret: Hmac.Secrets) => Hmac.verify({ secret, headers, rawBody: body, now: timestamp })
    assert.isTrue(Either.isRight(verify(newSecret)))
    assert.isTrue(Either.isRight(verify(oldSecret)))
    assert.isTrue(Either.isRight(verify([stranger, oldSecret])))
    assert.strictEqual(tagOf(verify(stranger)), "SignatureMismatch")
    assert.strictEqual(tagOf(verify([stranger, "another-stranger-000"])), "SignatureMismatch")
  })

  it("a receiver holding old and new secrets accepts a delivery signed with either alone", () => {
    fc.assert(
      fc.property(fc.boolean(), fc.string({ minLength: 1 }), (useNew, text) => {
        const headers = Hmac.signatureHeaders(useNew ? newSecret : oldSecret, timestamp, text)
        return Either.isRight(Hmac.verify({ secret: [oldSecret, newSecret], headers, rawBody: text, now: timestamp }))
      })
    )
  })

  it("refuses a list with a malformed entry, more than the bound, and an empty list of secrets", () => {
    const good = Hmac.sign(newSecret, timestamp, body)
    const verify = (signature: string) =>
      Hmac.verify({
        secret: newSecret,
        headers: {
          "x-signature-algorithm": "hmac-sha256",
          "x-signature-timestamp": String(timestamp),
          "x-signature": signature
        },
        rawBody: body,
        now: timestamp
      })
    assert.isTrue(Either.isRight(verify(`${good},${"0".repeat(64)}`)))
    assert.isTrue(Either.isRight(verify(`${"0".repeat(64)} ,  ${good.toUpperCase()}`)))
    assert.strictEqual(tagOf(verify(`${good}, xyz`)), "MalformedHeader")
    assert.strictEqual(tagOf(verify(`${good},`)), "MalformedHeader")
    assert.strictEqual(tagOf(verify(Array(Hmac.maxSignatures).fill(good).join(","))), "Right")
    assert.strictEqual(
      tagOf(
        verify(
          Array(Hmac.maxSignatures + 1)
            .fill(good)
            .join(",")
        )
      ),
      "MalformedHeader"
    )
    assert.throws(
      () =>
        Hmac.verify({
          secret: [],
          headers: Hmac.signatureHeaders(newSecret, timestamp, body),
          rawBody: body,
          now: timestamp
        }),
      RangeError
    )
  })
})

describe("Standard Webhooks with several secrets", () => {
  it("signs v1,<new> v1,<previous>, and the official library verifies with either secret", () => {
    const [fresh, previous] = [whsec(), whsec()]
    const id = "dlv_rotation"
    const now = Math.floor(Date.now() / 1000)
    const headers = StandardWebhooks.signatureHeaders([fresh, previous], id, now, body)
    assert.strictEqual(
      headers["webhook-signature"],
      `${StandardWebhooks.sign(fresh, id, now, body)} ${StandardWebhooks.sign(previous, id, now, body)}`
    )
    assert.deepStrictEqual(new Webhook(fresh).verify(body, headers), JSON.parse(body))
    assert.deepStrictEqual(new Webhook(previous).verify(body, headers), JSON.parse(body))
    assert.throws(() => new Webhook(whsec()).verify(body, headers))
    // And so does the kit, with one secret or a list.
    assert.isTrue(Either.isRight(StandardWebhooks.verify({ secret: previous, headers, rawBody: body, now })))
    assert.isTrue(Either.isRight(StandardWebhooks.verify({ secret: [whsec(), fresh], headers, rawBody: body, now })))
    assert.strictEqual(
      tagOf(StandardWebhooks.verify({ secret: [whsec()], headers, rawBody: body, now })),
      "SignatureMismatch"
    )
  })

  it("bounds the entries it reads", () => {
    const secret = whsec()
    const one = StandardWebhooks.signatureHeaders(secret, "dlv_x", timestamp, body)
    const headers = (count: number) => ({
      ...one,
      "webhook-signature": Array(count).fill(one["webhook-signature"]).join(" ")
    })
    const verify = (count: number) =>
      StandardWebhooks.verify({ secret, headers: headers(count), rawBody: body, now: timestamp })
    assert.strictEqual(tagOf(verify(StandardWebhooks.maxSignatures)), "Right")
    assert.strictEqual(tagOf(verify(StandardWebhooks.maxSignatures + 1)), "MalformedHeader")
  })
})

describe("Basic and Bearer with several credentials", () => {
  it("accepts any of the tokens or passwords, and nothing else", () => {
    const bearer = (token: string) => ({ authorization: Authorization.bearerAuthorization(token) })
    assert.isTrue(
      Either.isRight(Authorization.verifyBearer(bearer("old-token"), ["old-token", Redacted.make("new-token")]))
    )
    assert.isTrue(
      Either.isRight(Authorization.verifyBearer(bearer("new-token"), ["old-token", Redacted.make("new-token")]))
    )
    assert.strictEqual(
      tagOf(Authorization.verifyBearer(bearer("other"), ["old-token", "new-token"])),
      "CredentialsMismatch"
    )
    const basic = (password: string) => ({ authorization: Authorization.basicAuthorization("ops", password) })
    const expected = { username: "ops", password: ["old-pass", "new-pass"] }
    assert.isTrue(Either.isRight(Authorization.verifyBasic(basic("old-pass"), expected)))
    assert.isTrue(Either.isRight(Authorization.verifyBasic(basic("new-pass"), expected)))
    assert.strictEqual(tagOf(Authorization.verifyBasic(basic("other"), expected)), "CredentialsMismatch")
    assert.throws(() => Authorization.verifyBearer(bearer("old-token"), []), RangeError)
  })
})

describe("Receiver.authenticate with several secrets", () => {
  it("takes lists for every method", () => {
    const signed = Hmac.signatureHeaders(oldSecret, timestamp, body)
    const hmac = Receiver.authenticate(
      { type: "hmac", secret: [newSecret, oldSecret] },
      { headers: signed, rawBody: body, now: timestamp }
    )
    assert.isTrue(Either.isRight(hmac))
    const previous = whsec()
    const standard = Receiver.authenticate(
      { type: "hmac", scheme: "standard-webhooks", secret: [whsec(), previous] },
      { headers: StandardWebhooks.signatureHeaders(previous, "dlv_1", timestamp, body), rawBody: body, now: timestamp }
    )
    assert.isTrue(Either.isRight(standard))
    const bearer = Receiver.authenticate(
      { type: "bearer", token: ["a-token", "b-token"] },
      { headers: { authorization: "Bearer b-token" }, rawBody: "", now: 0 }
    )
    assert.isTrue(Either.isRight(bearer))
  })
})
