/**
 * Opaque, time-sortable identifiers with a type prefix (`drf_…`): 10 Crockford base-32 characters of
 * epoch milliseconds, then 16 random ones (80 bits).
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as RandomBytes from "./RandomBytes.js"

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"

/** The prefixes the contract names. @since 0.1.0 */
export type Prefix = "drf" | "act" | "tour" | "whk" | "evt" | "dlv" | "alr" | "key" | "wsp" | "cst"

/** Builds an id from a time and 10 random bytes; pure, for tests and replays. @since 0.1.0 */
export const format = (prefix: Prefix, epochMillis: number, random: Uint8Array): string => {
  let time = ""
  let rest = Math.max(0, Math.floor(epochMillis))
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[rest % 32] + time
    rest = Math.floor(rest / 32)
  }
  let tail = ""
  for (let i = 0; i < 16; i++) {
    const bit = i * 5
    const byte = bit >> 3
    const word = ((random[byte] ?? 0) << 8) | (random[byte + 1] ?? 0)
    tail += ALPHABET[(word >> (11 - (bit & 7))) & 31]
  }
  return `${prefix}_${time}${tail}`
}

/** A fresh id for a time already read (one `Clock` reading for a batch of ids). @since 0.1.0 */
export const makeAt = (prefix: Prefix, epochMillis: number): string =>
  format(prefix, epochMillis, RandomBytes.bytes(10))

/** A fresh id for the current `Clock` time. @since 0.1.0 */
export const make = (prefix: Prefix): Effect.Effect<string> =>
  Effect.map(Clock.currentTimeMillis, (now) => makeAt(prefix, now))

/**
 * The key `derive` mixes into an id: 80 bits of SHA-256 over `text`. Compute it once per
 * source of keys (a webhook), not per id.
 * @since 0.1.0
 */
export const deriveKey = (text: string): Uint8Array =>
  new Uint8Array(createHash("sha256").update(text, "utf8").digest().subarray(0, 10))

const VALUE = new Map([...ALPHABET].map((char, index) => [char, index]))

/**
 * A deterministic id: the time of `from` and its random tail XOR `key`, so work redone after a crash
 * keeps its id; distinct sources or keys never collide. A `from` that is not an id gives epoch 0.
 * @since 0.1.0
 */
export const derive = (prefix: Prefix, from: string, key: Uint8Array): string => {
  const separator = from.indexOf("_")
  const tail = from.slice(separator + 1)
  const bytes = new Uint8Array(10)
  const fromId = separator > 0 && /^[0-9a-hjkmnp-tv-z]{26}$/.test(tail)
  if (fromId) {
    let acc = 0
    let bits = 0
    let j = 0
    for (let i = 10; i < 26; i++) {
      acc = ((acc << 5) | VALUE.get(tail[i]!)!) & 0xfff
      bits += 5
      if (bits >= 8) {
        bits -= 8
        bytes[j++] = (acc >> bits) & 255
      }
    }
  } else {
    bytes.set(deriveKey(from))
  }
  for (let i = 0; i < 10; i++) bytes[i]! ^= key[i] ?? 0
  const id = format(prefix, 0, bytes)
  return fromId ? `${prefix}_${tail.slice(0, 10)}${id.slice(prefix.length + 11)}` : id
}

/**
 * When an id was made (epoch milliseconds), read from its time part; a derived id has the time
 * of the id it was derived from. None for a string that is not an id.
 * @since 0.1.0
 */
export const timeOf = (id: string): Option.Option<number> => {
  const separator = id.indexOf("_")
  const tail = id.slice(separator + 1)
  if (separator <= 0 || !/^[0-9a-hjkmnp-tv-z]{26}$/.test(tail)) return Option.none()
  let millis = 0
  for (let i = 0; i < 10; i++) millis = millis * 32 + VALUE.get(tail[i]!)!
  return Option.some(millis)
}

/** Whether a string looks like an id of the given prefix. @since 0.1.0 */
export const isId = (prefix: Prefix, value: string): boolean =>
  value.length === prefix.length + 27 &&
  value.startsWith(`${prefix}_`) &&
  /^[0-9a-hjkmnp-tv-z]{26}$/.test(value.slice(prefix.length + 1))
