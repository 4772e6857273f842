/**
 * Helpers for webhook receivers that read the catalogue's payloads: normalise a callout action's
 * `createdAt`, and tell a terminal loss from a return on leg loads (spec "Events"). Plain
 * synchronous functions, for any HTTP framework; deduplication by `X-Delivery-Id` is
 * `@waybill/signing`'s `Deduplicator`.
 * @since 0.1.0
 */

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
