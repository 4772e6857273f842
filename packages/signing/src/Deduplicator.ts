/**
 * Deduplication for webhook receivers: a bounded memory of the `X-Delivery-Id`s already handled,
 * since a delivery may arrive more than once (at-least-once, one retry with the same id).
 * @since 0.2.0
 */

/** A bounded memory of delivery ids already handled. @since 0.2.0 */
export interface Deduplicator {
  /** Whether `deliveryId` was seen before (then drop the delivery); records it when it was not. */
  readonly seen: (deliveryId: string) => boolean
  /** Whether `deliveryId` is remembered, without recording it. */
  readonly has: (deliveryId: string) => boolean
  /** Forgets `deliveryId`, e.g. when handling failed and the retry must be processed. */
  readonly forget: (deliveryId: string) => void
  /** How many ids are remembered right now (at most `capacity`). */
  readonly size: () => number
}

/**
 * A deduplicator of the `capacity` most recently seen delivery ids. A failed delivery is retried
 * once, shortly after, with the same id, so a modest capacity covers it. Throws a `RangeError`
 * unless `capacity` is a positive integer.
 * @since 0.2.0
 */
export const make = (options: { readonly capacity: number }): Deduplicator => {
  if (!Number.isInteger(options.capacity) || options.capacity < 1) {
    throw new RangeError(`capacity must be a positive integer, got ${options.capacity}`)
  }
  const capacity = options.capacity
  // A Map keeps insertion order: re-inserting on a hit makes the first key the least recently seen.
  const ids = new Map<string, true>()
  return {
    seen: (deliveryId) => {
      if (ids.has(deliveryId)) {
        ids.delete(deliveryId)
        ids.set(deliveryId, true)
        return true
      }
      ids.set(deliveryId, true)
      if (ids.size > capacity) {
        ids.delete(ids.keys().next().value as string)
      }
      return false
    },
    has: (deliveryId) => ids.has(deliveryId),
    forget: (deliveryId) => {
      ids.delete(deliveryId)
    },
    size: () => ids.size
  }
}
