/**
 * Signing throughput: `Hmac.sign` / `Hmac.verify` on a 1 KiB body against raw `node:crypto`
 * (`createHmac`, plus `timingSafeEqual` for verify) and against the `standardwebhooks` package
 * (a different scheme, the same work: one HMAC-SHA256 over the body and a constant-time compare).
 *
 * Targets: sign ≥ 0.9 × raw createHmac, verify ≥ 0.8 × raw createHmac.
 *
 * The machine is shared and its load swings within seconds, so contenders are measured in many
 * short slices, taking turns; a contender's rate is the median of its slices, and each target
 * is the median of the per-round ratios (ours against raw measured back to back), which cancels
 * most of the swing.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { Hmac } from "@waybill/signing"
import { Webhook } from "standardwebhooks"
import { type Measurement, measure, median, report, target } from "./harness.js"

const ROUNDS = 25
const SECONDS = 0.1

const secret = "whk-bench-secret-0123456789abcdef"
const secretBytes = new TextEncoder().encode(secret)
const timestamp = Math.floor(Date.now() / 1000)

// A realistic 1 KiB delivery envelope (exactly 1024 bytes of UTF-8).
const envelope = (filler: string) =>
  JSON.stringify({
    id: "evt_1q5pzf2a00k3m9v7x4c8d6b2ne",
    type: "tour-created",
    createdAt: timestamp,
    payload: { tour: { id: "tour_1q5pzf2a00p7w3r9t6y2h8j4kq", status: "planned", properties: { note: filler } } }
  })
const base = envelope("").length
const body = envelope("x".repeat(1024 - base))
if (Buffer.byteLength(body) !== 1024) throw new Error(`body is ${Buffer.byteLength(body)} bytes, expected 1024`)

const headers = { ...Hmac.signatureHeaders(secret, timestamp, body) }
const signature = headers["X-Signature"]

const rawSign = () => createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")
const rawVerify = () =>
  timingSafeEqual(createHmac("sha256", secret).update(`${timestamp}.${body}`).digest(), Buffer.from(signature, "hex"))

const standard = new Webhook(secretBytes, { format: "raw" })
const msgId = "msg_1q5pzf2a00k3m9v7x4c8d6b2ne"
const stamp = new Date(timestamp * 1000)
const standardHeaders = {
  "webhook-id": msgId,
  "webhook-timestamp": String(timestamp),
  "webhook-signature": standard.sign(msgId, stamp, body)
}

const now = timestamp
const verifyOptions = { secret, headers, rawBody: body, now }

// Sanity: every contender really does the work it claims, and they agree where they should.
if (Hmac.sign(secret, timestamp, body) !== rawSign()) throw new Error("Hmac.sign disagrees with createHmac")
if (Hmac.verify(verifyOptions)._tag !== "Right" || !rawVerify()) throw new Error("verification failed")
standard.verify(body, standardHeaders, { jsonParse: false })

const contenders: Record<string, () => unknown> = {
  "sign: createHmac (raw)": rawSign,
  "sign: Hmac.sign": () => Hmac.sign(secret, timestamp, body),
  "sign: Hmac.signatureHeaders": () => Hmac.signatureHeaders(secret, timestamp, body)["X-Signature"],
  "sign: standardwebhooks": () => standard.sign(msgId, stamp, body),
  "verify: createHmac + timingSafeEqual (raw)": rawVerify,
  "verify: Hmac.verify": () => Hmac.verify(verifyOptions)._tag === "Right",
  "verify: standardwebhooks": () => {
    standard.verify(body, standardHeaders, { jsonParse: false })
    return true
  }
}

const rates = new Map<string, Array<number>>(Object.keys(contenders).map((name) => [name, []]))
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, fn] of Object.entries(contenders)) {
    rates.get(name)!.push(measure(name, fn, SECONDS).opsPerSecond)
  }
}
const rows = (prefix: string): Array<Measurement> =>
  [...rates].filter(([name]) => name.startsWith(prefix)).map(([name, all]) => ({ name, opsPerSecond: median(all) }))
const pairedRatio = (ours: string, raw: string): number => {
  const a = rates.get(ours)!
  const b = rates.get(raw)!
  return median(a.map((rate, round) => rate / b[round]!))
}

console.log(`1 KiB body; median of ${ROUNDS} interleaved slices of ${SECONDS} s per contender`)
report("sign", rows("sign:"), "sign: createHmac (raw)")
report("verify", rows("verify:"), "verify: createHmac + timingSafeEqual (raw)")
console.log("\nTargets (median of per-round ratios against raw, measured back to back):")
const results = [
  target("Hmac.sign / raw createHmac", pairedRatio("sign: Hmac.sign", "sign: createHmac (raw)"), 0.9),
  target(
    "Hmac.verify / raw createHmac",
    pairedRatio("verify: Hmac.verify", "verify: createHmac + timingSafeEqual (raw)"),
    0.8
  )
]
process.exit(results.every(Boolean) ? 0 : 1)
