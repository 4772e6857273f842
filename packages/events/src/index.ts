/**
 * @since 0.1.0
 */

/**
 * Helpers for webhook receivers: deduplication, timestamp normalisation, leg-load outcomes.
 *
 * @since 0.1.0
 */
export * as Consumer from "./Consumer.js"

/**
 * The outbox port producers publish events through.
 *
 * @since 0.1.0
 */
export * as EventOutbox from "./EventOutbox.js"
