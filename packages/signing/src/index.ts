/** @since 0.1.0 */

/** Basic and Bearer `Authorization` headers and their receiver-side checks. @since 0.1.0 */
export * as Authorization from "./Authorization.js"

/** A bounded memory of the delivery ids a receiver already handled. @since 0.2.0 */
export * as Deduplicator from "./Deduplicator.js"

/** HMAC-SHA256 signatures: `sign`, `signatureHeaders`, `verify` with a replay window. @since 0.1.0 */
export * as Hmac from "./Hmac.js"

/** The receiver kit: authenticate a Fetch `Request` or a Node `IncomingMessage`. @since 0.1.0 */
export * as Receiver from "./Receiver.js"

/** The replay window of both signature schemes: its default and its check. @since 0.2.0 */
export * as ReplayWindow from "./ReplayWindow.js"

/** The Standard Webhooks signature scheme: `whsec_` secrets, `webhook-*` headers, sign and verify. @since 0.1.0 */
export * as StandardWebhooks from "./StandardWebhooks.js"

/** The typed reasons a delivery is refused. @since 0.1.0 */
export * as VerificationError from "./VerificationError.js"
