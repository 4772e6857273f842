/**
 * Helpers for webhook receivers: deduplication by `X-Delivery-Id`, callout `createdAt` in
 * milliseconds, terminal loss versus return on leg loads. Plain functions, for any HTTP framework.
 * @since 0.1.0
 */

/**
 * A bounded memory of delivery ids already handled.
 * @since 0.1.0
 */
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
 * @since 0.1.0
 */
export const makeDeduplicator = (options: { readonly capacity: number }): Deduplicator => {
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

/**
 * Epoch milliseconds of a callout action's `createdAt`: older deliveries carried seconds, so a
 * value below 10^12 is multiplied by 1000.
 * @since 0.1.0
 */
export const calloutCreatedAtMillis = (createdAt: number): number => (createdAt < 1e12 ? createdAt * 1000 : createdAt)

/**
 * A `callout-action-created` payload with `action.createdAt` normalised to epoch milliseconds.
 * @since 0.1.0
 */
export const normalizeCalloutAction = <P extends { readonly action: { readonly createdAt: number } }>(
  payload: P
): P => ({
  ...payload,
  action: { ...payload.action, createdAt: calloutCreatedAtMillis(payload.action.createdAt) }
})

/**
 * Whether a leg load is a terminal loss (`Perished`): goods written off, no follow-up shipment.
 * @since 0.1.0
 */
export const isTerminalLoss = (load: { readonly status?: string | undefined }): boolean => load.status === "Perished"

/**
 * Whether a leg load was returned (`Returned`): intact, its obligation moved to a return shipment.
 * @since 0.1.0
 */
export const isReturned = (load: { readonly status?: string | undefined }): boolean => load.status === "Returned"
