import { randomBytes } from "node:crypto"
import { inspect } from "node:util"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as fc from "fast-check"
import { layerMemory, makeAesGcm, SecretBox, SecretBoxError } from "../src/SecretBox.js"
import { leakedSecrets, renderings, secrets } from "./fixtures.js"

const keyHex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

describe("SecretBox (AES-256-GCM)", () => {
  it.effect("seals and opens a secret for the same place", () =>
    Effect.gen(function* () {
      const box = yield* makeAesGcm(Redacted.make(keyHex))
      const sealed = yield* box.seal(Redacted.make(secrets.hmac), "whk_1/auth.secret")
      assert.match(sealed, /^v1\.[A-Za-z0-9_-]+$/)
      assert.notInclude(sealed, secrets.hmac)
      const opened = yield* box.open(sealed, "whk_1/auth.secret")
      assert.strictEqual(Redacted.value(opened), secrets.hmac)
    })
  )

  it.effect("uses a fresh nonce per secret", () =>
    Effect.gen(function* () {
      const box = yield* makeAesGcm(randomBytes(32))
      const a = yield* box.seal(Redacted.make("same secret"), "ctx")
      const b = yield* box.seal(Redacted.make("same secret"), "ctx")
      assert.notStrictEqual(a, b)
      assert.notStrictEqual(a.slice(3, 19), b.slice(3, 19))
    })
  )

  it.effect("refuses another key, another place, and any altered byte", () =>
    Effect.gen(function* () {
      const box = yield* makeAesGcm(Redacted.make(keyHex))
      const other = yield* makeAesGcm(randomBytes(32))
      const sealed = yield* box.seal(Redacted.make(secrets.token), "whk_1/auth.token")
      const refused = [
        yield* Effect.exit(other.open(sealed, "whk_1/auth.token")),
        yield* Effect.exit(box.open(sealed, "whk_2/auth.token")),
        yield* Effect.exit(box.open(sealed.slice(0, -2), "whk_1/auth.token")),
        yield* Effect.exit(box.open("v1.AAAA", "whk_1/auth.token")),
        yield* Effect.exit(box.open("v2.whatever", "whk_1/auth.token"))
      ]
      for (const exit of refused) {
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) assert.deepStrictEqual(leakedSecrets(renderings(exit.cause)), [])
      }
    })
  )

  it.effect("detects a flipped bit anywhere in the sealed bytes (property)", () =>
    Effect.gen(function* () {
      const box = yield* makeAesGcm(Redacted.make(keyHex))
      const sealed = yield* box.seal(Redacted.make(secrets.password), "ctx")
      const bytes = Buffer.from(sealed.slice(3), "base64url")
      fc.assert(
        fc.property(fc.integer({ min: 0, max: bytes.length * 8 - 1 }), (bit) => {
          const altered = Buffer.from(bytes)
          altered[bit >> 3]! ^= 1 << (bit & 7)
          const exit = Effect.runSyncExit(box.open(`v1.${altered.toString("base64url")}`, "ctx"))
          return Exit.isFailure(exit)
        }),
        { numRuns: 200 }
      )
    })
  )

  it.effect("round-trips any text (property)", () =>
    Effect.gen(function* () {
      const box = yield* makeAesGcm(randomBytes(32))
      fc.assert(
        fc.property(fc.string({ unit: "grapheme", maxLength: 512 }), fc.string(), (secret, context) => {
          const sealed = Effect.runSync(box.seal(Redacted.make(secret), context))
          return Redacted.value(Effect.runSync(box.open(sealed, context))) === secret
        }),
        { numRuns: 100 }
      )
    })
  )

  it.effect("refuses a key that is not 32 bytes", () =>
    Effect.gen(function* () {
      for (const key of [Redacted.make("abcd"), Redacted.make(`${keyHex}00`), randomBytes(16)]) {
        const exit = yield* Effect.exit(makeAesGcm(key))
        assert.deepStrictEqual(
          exit,
          Exit.fail(new SecretBoxError({ message: "The secret key must be 32 bytes (64 hexadecimal characters)" }))
        )
      }
    })
  )

  it.effect("never shows an opened secret when printed, serialised or inspected", () =>
    Effect.gen(function* () {
      const box = yield* SecretBox
      const opened = yield* box.open(yield* box.seal(Redacted.make(secrets.hmac), "c"), "c")
      const value = { auth: { type: "hmac", secret: opened } }
      assert.deepStrictEqual(leakedSecrets([...renderings(value), inspect(value, { depth: 10 }), `${opened}`]), [])
    }).pipe(Effect.provide(layerMemory))
  )
})
