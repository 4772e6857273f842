/**
 * Cryptographically strong random bytes from a pool refilled 4 KiB at a time: one system call per
 * ~400 ids instead of one per id (publishing makes an id per event, fan-out one per delivery).
 * @since 0.1.0
 */
import { randomFillSync } from "node:crypto"

// A plain typed array (not a Node Buffer), so loading this module needs no Node global: the
// operator console bundles modules that import it for the browser.
const pool = new Uint8Array(4096)
let offset = pool.length

/** `size` random bytes (at most 4096), valid until the next call: copy them to keep them. @since 0.1.0 */
export const bytes = (size: number): Uint8Array => {
  const start = take(size)
  return pool.subarray(start, start + size)
}

const take = (size: number): number => {
  if (offset + size > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const start = offset
  offset += size
  return start
}

const HEX_DIGITS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"))

/** `size` random bytes (at most 4096) as lowercase hexadecimal, read straight from the pool. @since 0.1.0 */
export const hex = (size: number): string => {
  const start = take(size)
  let out = ""
  for (let i = start; i < start + size; i++) out += HEX_DIGITS[pool[i]!]
  return out
}

/** 128 random bits as 32 hexadecimal characters. @since 0.1.0 */
export const token = (): string => hex(16)
