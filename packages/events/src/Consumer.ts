/**
 * Helpers for webhook receivers: deduplicate by `X-Delivery-Id`, normalise a callout action's
 * `createdAt`, and tell a terminal loss from a return on leg loads (spec "Events"). They are plain
 * synchronous functions so a receiver can use them in any HTTP framework.
 * @since 0.1.0
 */

/**
 * A bounded memory of delivery ids already handled.
 * @since 0.1.0
 */
export interface Deduplicator {
  /**
   * Whether `deliveryId` was seen before; records it when it was not. A receiver drops the
   * delivery when this answers `true`.
   */
  readonly seen: (deliveryId: string) => boolean
  /** Whether `deliveryId` is remembered, without recording it. */
  readonly has: (deliveryId: string) => boolean
  /**
   * Forgets `deliveryId`, e.g. when handling it failed and the service's retry must be processed.
   */
  readonly forget: (deliveryId: string) => void
  /** How many ids are remembered right now (at most `capacity`). */
  readonly size: () => number
}

/**
 * A deduplicator that remembers the `capacity` most recently seen delivery ids (least recently
 * seen evicted first). The service retries a failed delivery once, shortly after, with the same
 * `X-Delivery-Id` (contract §5), so a modest capacity covers the retry window.
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
 * Epoch milliseconds of a callout action's `createdAt`. Deliveries sent before the change carried
 * seconds; a value below 10^12 is seconds and is multiplied by 1000.
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
 * Whether a leg load is a terminal loss (`Perished`): the goods are written off, the shipment
 * fails and no follow-up shipment will come, so do not wait for one.
 * @since 0.1.0
 */
export const isTerminalLoss = (load: { readonly status?: string | undefined }): boolean => load.status === "Perished"

/**
 * Whether a leg load was returned (`Returned`): the obligation moved to a return shipment, the
 * goods are intact and the shipment is not failed.
 * @since 0.1.0
 */
export const isReturned = (load: { readonly status?: string | undefined }): boolean => load.status === "Returned"
