/**
 * HMAC signatures without a server: what the service sends, and what a receiver checks.
 *
 *   npx tsx examples/embed/src/domain/signing.ts
 */
import * as Hmac from "@waybill/signing/Hmac"
import * as Either from "effect/Either"

const secret = "a shared secret of 16+ characters"
const body = JSON.stringify({ id: "evt_1", type: "tour-created", createdAt: 1798000000, payload: { tour: {} } })
const timestamp = 1798000000

// The sender: X-Signature-Algorithm, X-Signature-Timestamp and X-Signature.
export const headers = Hmac.signatureHeaders(secret, timestamp, body)

// The receiver: the raw body as received, its own clock (epoch seconds), a 5-minute window.
export const fresh = Hmac.verify({ secret, headers, rawBody: body, now: timestamp + 30 })
export const replayed = Hmac.verify({ secret, headers, rawBody: body, now: timestamp + 3600 })
export const tampered = Hmac.verify({ secret, headers, rawBody: body.replace("evt_1", "evt_2"), now: timestamp })

console.log(headers, Either.isRight(fresh), Either.isLeft(replayed), Either.isLeft(tampered))
