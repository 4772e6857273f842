/**
 * Cryptographically strong random bytes from a pool refilled 4 KiB at a time: one system call per
 * ~400 ids instead of one per id (publishing makes an id per event, fan-out one per delivery).
 *
 * @since 0.1.0
 */
import { randomFillSync } from "node:crypto"

// A plain typed array (not a Node Buffer), so loading this module needs no Node global: the
// operator console bundles modules that import it for the browser.
const pool = new Uint8Array(4096)
let offset = pool.length

/**
 * `size` random bytes (at most 4096), valid until the next call: copy them to keep them.
 *
 * @since 0.1.0
 * @category random
 */
export const bytes = (size: number): Uint8Array => {
  if (offset + size > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const out = pool.subarray(offset, offset + size)
  offset += size
  return out
}

/**
 * 128 random bits as 32 hexadecimal characters.
 *
 * @since 0.1.0
 * @category random
 */
export const token = (): string => Buffer.from(bytes(16)).toString("hex")
