/** @since 0.1.0 */

/** Deliveries, attempts, their statuses and error classes. @since 0.1.0 */
export * as Delivery from "./Delivery.js"

/** The storage port for deliveries: fan-out writes, leased claims, batched completions. @since 0.1.0 */
export * as DeliveryStore from "./DeliveryStore.js"

/** The dispatcher: fan-out, delivery with one retry, failure alerts. @since 0.1.0 */
export * as Dispatcher from "./Dispatcher.js"

/** The failure-alert port. @since 0.1.0 */
export * as FailureAlerts from "./FailureAlerts.js"

/** Flow control per webhook: the rate window, FIFO, and the failure count behind automatic disabling. @since 0.1.0 */
export * as FlowControl from "./FlowControl.js"

/** The name-resolution port used at registration. @since 0.1.0 */
export * as HostResolver from "./HostResolver.js"

/** The port that makes one delivery attempt. @since 0.1.0 */
export * as HttpSender from "./HttpSender.js"

/** The in-memory `DeliveryStore`, for tests and embedders without storage. @since 0.2.0 */
export * as MemoryDeliveryStore from "./MemoryDeliveryStore.js"

/** The fan-out side of the outbox. @since 0.1.0 */
export * as OutboxReader from "./OutboxReader.js"

/** Pages and cursors of webhook, delivery and alert lists. @since 0.1.0 */
export * as Page from "./Page.js"

/** The registration rules, every issue in one go. @since 0.1.0 */
export * as Registration from "./Registration.js"
/** Resend and replay: request rules, retention window, errors. @since 0.1.0 */
export * as Replay from "./Replay.js"
/** Retention: the window, its time ranges, expiry of open deliveries and the removal port. @since 0.1.0 */
export * as Retention from "./Retention.js"
/** Webhook secrets at rest: the `SecretBox` port and AES-256-GCM. @since 0.1.0 */
export * as SecretBox from "./SecretBox.js"

/** Secret rotation: the rotate request and its rules, and the sweep of expired previous secrets. @since 0.1.0 */
export * as SecretRotation from "./SecretRotation.js"

/** Which webhook targets are refused: the IANA special-purpose address registries. @since 0.1.0 */
export * as Ssrf from "./Ssrf.js"

/** Webhook schemas: request, stored form, masked response. @since 0.1.0 */
export * as Webhook from "./Webhook.js"

/** The storage port for webhooks. @since 0.1.0 */
export * as WebhookRepository from "./WebhookRepository.js"

/** The webhook service behind the `/webhooks` and `/alerts` endpoints. @since 0.1.0 */
export * as WebhookService from "./WebhookService.js"
