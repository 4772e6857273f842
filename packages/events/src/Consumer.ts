/**
 * Helpers for receivers of the catalogue's payloads: callout `createdAt` in milliseconds, terminal
 * loss versus return on leg loads. Plain functions; deduplication is `@waybill/signing`'s `Deduplicator`.
 * @since 0.1.0
 */

/**
 * Epoch milliseconds of a callout action's `createdAt`: older deliveries carried seconds, so a
 * value below 10^12 is multiplied by 1000.
 * @since 0.1.0
 */
export const calloutCreatedAtMillis = (createdAt: number): number => (createdAt < 1e12 ? createdAt * 1000 : createdAt)

/** A `callout-action-created` payload with `action.createdAt` normalised to epoch milliseconds. @since 0.1.0 */
export const normalizeCalloutAction = <P extends { readonly action: { readonly createdAt: number } }>(
  payload: P
): P => ({
  ...payload,
  action: { ...payload.action, createdAt: calloutCreatedAtMillis(payload.action.createdAt) }
})

/** Whether a leg load is a terminal loss (`Perished`): goods written off, no follow-up shipment. @since 0.1.0 */
export const isTerminalLoss = (load: { readonly status?: string | undefined }): boolean => load.status === "Perished"

/** Whether a leg load was returned (`Returned`): intact, its obligation moved to a return shipment. @since 0.1.0 */
export const isReturned = (load: { readonly status?: string | undefined }): boolean => load.status === "Returned"
