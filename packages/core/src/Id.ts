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

const CODES = Array.from(ALPHABET, (char) => char.charCodeAt(0))

// The value of each alphabet character by its code, -1 for any other character.
const VALUE = new Int8Array(128).fill(-1)
for (let index = 0; index < ALPHABET.length; index++) VALUE[ALPHABET.charCodeAt(index)] = index

// An id's 26 characters, written in place and turned into one string: an id costs one string
// rather than one per character (ids are made per event and derived per delivery).
const chars: Array<number> = new Array(26).fill(CODES[0])
const scratch = new Uint8Array(10)

// The 16 characters of 80 random bits, into `chars` from 10.
const writeTail = (random: Uint8Array): void => {
  for (let i = 0; i < 16; i++) {
    const bit = i * 5
    const byte = bit >> 3
    const word = ((random[byte] ?? 0) << 8) | (random[byte + 1] ?? 0)
    chars[10 + i] = CODES[(word >> (11 - (bit & 7))) & 31]!
  }
}

const written = (prefix: Prefix): string => `${prefix}_${String.fromCharCode.apply(null, chars)}`

/** Builds an id from a time and 10 random bytes; pure, for tests and replays. @since 0.1.0 */
export const format = (prefix: Prefix, epochMillis: number, random: Uint8Array): string => {
  let rest = Math.max(0, Math.floor(epochMillis))
  for (let i = 9; i >= 0; i--) {
    chars[i] = CODES[rest % 32]!
    rest = Math.floor(rest / 32)
  }
  writeTail(random)
  return written(prefix)
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

// Whether `text` from `start` is the 26 characters of an id.
const isIdTail = (text: string, start: number): boolean => {
  if (text.length - start !== 26) return false
  for (let i = start; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code >= 128 || VALUE[code]! < 0) return false
  }
  return true
}

/**
 * A deterministic id: the time of `from` and its random tail XOR `key`, so work redone after a crash
 * keeps its id; distinct sources or keys never collide. A `from` that is not an id gives epoch 0.
 * @since 0.1.0
 */
export const derive = (prefix: Prefix, from: string, key: Uint8Array): string => {
  const separator = from.indexOf("_")
  if (separator > 0 && isIdTail(from, separator + 1)) {
    // The time part as it is; the random part's 80 bits, five from each character.
    let acc = 0
    let bits = 0
    let j = 0
    for (let i = 0; i < 10; i++) chars[i] = from.charCodeAt(separator + 1 + i)
    for (let i = separator + 11; i < from.length; i++) {
      acc = ((acc << 5) | VALUE[from.charCodeAt(i)]!) & 0xfff
      bits += 5
      if (bits >= 8) {
        bits -= 8
        scratch[j++] = (acc >> bits) & 255
      }
    }
  } else {
    chars.fill(CODES[0]!, 0, 10)
    scratch.set(deriveKey(from))
  }
  for (let i = 0; i < 10; i++) scratch[i]! ^= key[i] ?? 0
  writeTail(scratch)
  return written(prefix)
}

/**
 * When an id was made (epoch milliseconds), read from its time part; a derived id has the time
 * of the id it was derived from. None for a string that is not an id.
 * @since 0.1.0
 */
export const timeOf = (id: string): Option.Option<number> => {
  const separator = id.indexOf("_")
  if (separator <= 0 || !isIdTail(id, separator + 1)) return Option.none()
  let millis = 0
  for (let i = separator + 1; i < separator + 11; i++) millis = millis * 32 + VALUE[id.charCodeAt(i)]!
  return Option.some(millis)
}

/** Whether a string looks like an id of the given prefix. @since 0.1.0 */
export const isId = (prefix: Prefix, value: string): boolean =>
  value.length === prefix.length + 27 && value.startsWith(`${prefix}_`) && isIdTail(value, prefix.length + 1)
