/** Webhook secrets at rest (contract §5, §7): the `SecretBox` port and AES-256-GCM (docs/internals.md). @since 0.1.0 */
import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { SealedSecret } from "./Webhook.js"

/**
 * A sealed secret does not open, or a key is not 32 bytes; the message holds no key or secret material.
 * @since 0.1.0
 */
export class SecretBoxError extends Schema.TaggedError<SecretBoxError>("@waybill/webhooks/SecretBoxError")(
  "SecretBoxError",
  { message: Schema.String }
) {}

/** @since 0.1.0 */
export class SecretBox extends Context.Tag("@waybill/webhooks/SecretBox")<
  SecretBox,
  {
    /** Seals a secret for one place (`Webhook.secretContext`). */
    readonly seal: (secret: Redacted.Redacted<string>, context: string) => Effect.Effect<SealedSecret>
    readonly open: (sealed: string, context: string) => Effect.Effect<Redacted.Redacted<string>, SecretBoxError>
  }
>() {}

const VERSION = "v1."
const NONCE_BYTES = 12
const TAG_BYTES = 16
const KEY_HEX = /^[0-9a-fA-F]{64}$/

const keyBytes = (key: Uint8Array | Redacted.Redacted<string>): Uint8Array | undefined => {
  if (Redacted.isRedacted(key)) {
    const hex = Redacted.value(key)
    return KEY_HEX.test(hex) ? Buffer.from(hex, "hex") : undefined
  }
  return key.byteLength === 32 ? key : undefined
}

const fromKey = (key: KeyObject): SecretBox["Type"] => {
  const seal = (secret: Redacted.Redacted<string>, context: string) =>
    Effect.sync(() => {
      const nonce = randomBytes(NONCE_BYTES)
      const cipher = createCipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES })
      cipher.setAAD(Buffer.from(context, "utf8"))
      const ciphertext = Buffer.concat([cipher.update(Redacted.value(secret), "utf8"), cipher.final()])
      const sealed = Buffer.concat([nonce, cipher.getAuthTag(), ciphertext]).toString("base64url")
      return `${VERSION}${sealed}` as SealedSecret
    })
  const open = (sealed: string, context: string) =>
    Effect.suspend(() => {
      if (!sealed.startsWith(VERSION)) {
        return Effect.fail(new SecretBoxError({ message: "The sealed secret has an unknown format" }))
      }
      const bytes = Buffer.from(sealed.slice(VERSION.length), "base64url")
      if (bytes.length < NONCE_BYTES + TAG_BYTES) {
        return Effect.fail(new SecretBoxError({ message: "The sealed secret is truncated" }))
      }
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, NONCE_BYTES), {
          authTagLength: TAG_BYTES
        })
        decipher.setAAD(Buffer.from(context, "utf8"))
        decipher.setAuthTag(bytes.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES))
        const plain = Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()])
        return Effect.succeed(Redacted.make(plain.toString("utf8")))
      } catch {
        // Node's message says only that authentication failed: say it in words an operator can act on.
        return Effect.fail(
          new SecretBoxError({
            message: "The sealed secret does not open: another key, altered data, or sealed for another webhook"
          })
        )
      }
    })
  return SecretBox.of({ seal, open })
}

/** An AES-256-GCM box over a 32-byte key: raw bytes, or 64 hex digits (`WAYBILL_SECRET_KEY`). @since 0.1.0 */
export const makeAesGcm = (
  key: Uint8Array | Redacted.Redacted<string>
): Effect.Effect<SecretBox["Type"], SecretBoxError> =>
  Effect.suspend(() => {
    const bytes = keyBytes(key)
    return bytes === undefined
      ? Effect.fail(new SecretBoxError({ message: "The secret key must be 32 bytes (64 hexadecimal characters)" }))
      : Effect.succeed(fromKey(createSecretKey(bytes)))
  })

/** The AES-256-GCM box as a layer. @since 0.1.0 */
export const layerAesGcm = (key: Uint8Array | Redacted.Redacted<string>): Layer.Layer<SecretBox, SecretBoxError> =>
  Layer.effect(SecretBox, makeAesGcm(key))

/** An AES-256-GCM box under a random key that lives as long as the layer (webhooks in memory only). @since 0.1.0 */
export const layerMemory: Layer.Layer<SecretBox> = Layer.sync(SecretBox, () =>
  fromKey(createSecretKey(randomBytes(32)))
)
