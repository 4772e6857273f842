/**
 * @since 0.1.0
 */

/**
 * The `ApiKeyStore` port on PostgreSQL.
 *
 * @since 0.1.0
 */
export * as ApiKeyStore from "./ApiKeyStore.js"

/**
 * The database layer: PostgreSQL or embedded PGlite, migrated.
 *
 * @since 0.1.0
 */
export * as Database from "./Database.js"
/**
 * The `DeliveryStore` port on PostgreSQL: leased claims with `SKIP LOCKED`.
 *
 * @since 0.1.0
 */
export * as DeliveryStore from "./DeliveryStore.js"
/**
 * The `DraftRepository` port on PostgreSQL.
 *
 * @since 0.1.0
 */
export * as DraftRepository from "./DraftRepository.js"
/**
 * The `EventOutbox` port on PostgreSQL.
 *
 * @since 0.1.0
 */
export * as EventOutbox from "./EventOutbox.js"
/**
 * The `FailureAlerts` port on PostgreSQL: stored and logged.
 *
 * @since 0.1.0
 */
export * as FailureAlerts from "./FailureAlerts.js"

/**
 * The `IdempotencyStore` port of `@waybill/core` on PostgreSQL.
 *
 * @since 0.1.0
 */
export * as IdempotencyStore from "./IdempotencyStore.js"
/**
 * The schema as an ordered list of migrations.
 *
 * @since 0.1.0
 */
export * as Migrations from "./Migrations.js"
/**
 * The `OutboxReader` port on PostgreSQL: fan-out claims.
 *
 * @since 0.1.0
 */
export * as OutboxReader from "./OutboxReader.js"
/**
 * The `RecurringMasters` port on PostgreSQL: masters claimed with `SKIP LOCKED`.
 *
 * @since 0.1.0
 */
export * as RecurringMasters from "./RecurringMasters.js"
/**
 * Throw-away databases for storage tests.
 *
 * @since 0.1.0
 */
export * as Testing from "./Testing.js"

/**
 * The `TourRepository` and `TourQuery` ports on PostgreSQL.
 *
 * @since 0.1.0
 */
export * as TourRepository from "./TourRepository.js"

/**
 * The `WebhookRepository` port on PostgreSQL.
 *
 * @since 0.1.0
 */
export * as WebhookRepository from "./WebhookRepository.js"
