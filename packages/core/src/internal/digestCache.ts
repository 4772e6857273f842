/**
 * The SHA-256 digests of the keys presented most recently, so that a client sending the same
 * key on every request has it hashed once. Only the digest is remembered, never whether the key
 * was valid: every request is still checked against the configured keys and the store, so a
 * revocation holds at once.
 *
 * Bounded: once `capacity` keys are held, the one presented longest ago makes room (a `Map`
 * keeps insertion order; a hit moves its key to the end), so keys sent at random cost memory no
 * more than the bound and only push older entries out.
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
