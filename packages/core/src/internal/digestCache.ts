import { createHash, timingSafeEqual } from "node:crypto"

/** SHA-256 of a secret presented by a caller (an API key, a console token). */
export const digest = (secret: string): Buffer => createHash("sha256").update(secret, "utf8").digest()

/** Whether two digests are equal, in constant time; a stored hash that is not 32 bytes never matches. */
export const sameDigest = (presented: Buffer, stored: Buffer): boolean =>
  presented.length === stored.length && timingSafeEqual(presented, stored)

/**
 * The SHA-256 digests of the keys presented most recently, in a bounded map (least recent out first);
 * validity is never cached (docs/internals.md, digestCache).
 */
export const makeDigestCache = (digest: (key: string) => Buffer, capacity: number) => {
  const digests = new Map<string, Buffer>()
  return {
    digest: (key: string): Buffer => {
      const cached = digests.get(key)
      if (cached !== undefined) {
        digests.delete(key)
        digests.set(key, cached)
        return cached
      }
      const computed = digest(key)
      if (digests.size >= capacity) digests.delete(digests.keys().next().value!)
      digests.set(key, computed)
      return computed
    },
    /** How many digests are held (for tests). */
    size: () => digests.size
  }
}
