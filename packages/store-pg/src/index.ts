/** @since 0.1.0 */

/** The database layer: PostgreSQL or embedded PGlite, migrated. @since 0.1.0 */
export * as Database from "./Database.js"

/** Publishing an event inside a host's own open PostgreSQL transaction, on its connection. @since 0.2.0 */
export * as HostTransaction from "./HostTransaction.js"

/** The schema as an ordered list of migrations. @since 0.1.0 */
export * as Migrations from "./Migrations.js"

/** The `ApiKeyStore` port on PostgreSQL. @since 0.1.0 */
export * as PgApiKeyStore from "./PgApiKeyStore.js"

/** The `ConsoleTokenStore` port on PostgreSQL. @since 0.3.0 */
export * as PgConsoleTokenStore from "./PgConsoleTokenStore.js"

/** The `DeliveryStore` port on PostgreSQL: leased claims with `SKIP LOCKED`. @since 0.1.0 */
export * as PgDeliveryStore from "./PgDeliveryStore.js"

/** The `DraftRepository` port on PostgreSQL. @since 0.1.0 */
export * as PgDraftRepository from "./PgDraftRepository.js"

/** The `EventOutbox` port on PostgreSQL. @since 0.1.0 */
export * as PgEventOutbox from "./PgEventOutbox.js"

/** The `FailureAlerts` port on PostgreSQL: stored and logged. @since 0.1.0 */
export * as PgFailureAlerts from "./PgFailureAlerts.js"

/** The `IdempotencyStore` port of `@waybill/core` on PostgreSQL. @since 0.1.0 */
export * as PgIdempotencyStore from "./PgIdempotencyStore.js"

/** The storage gauges of the metrics, read from PostgreSQL. @since 0.1.0 */
export * as PgMetrics from "./PgMetrics.js"

/** The `OutboxReader` port on PostgreSQL: fan-out claims. @since 0.1.0 */
export * as PgOutboxReader from "./PgOutboxReader.js"

/** The `RecurringMasterRepository` port on PostgreSQL: masters claimed with `SKIP LOCKED`. @since 0.1.0 */
export * as PgRecurringMasterRepository from "./PgRecurringMasterRepository.js"

/** The `TourRepository` and `TourQuery` ports on PostgreSQL. @since 0.1.0 */
export * as PgTourRepository from "./PgTourRepository.js"

/** The `WebhookRepository` port on PostgreSQL. @since 0.1.0 */
export * as PgWebhookRepository from "./PgWebhookRepository.js"

/** Throw-away databases for storage tests. @since 0.1.0 */
export * as Testing from "./Testing.js"
