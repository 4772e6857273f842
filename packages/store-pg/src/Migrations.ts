/**
 * The schema, as one ordered list of migrations: the single source of truth for both
 * PostgreSQL and the embedded PGlite database. Add a migration; never edit a shipped one.
 *
 * @since 0.1.0
 */
import * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import workspacesAndApiKeys from "./migrations/0001_workspaces_and_api_keys.js"
import draftsAndEvents from "./migrations/0002_drafts_and_events.js"
import tours from "./migrations/0003_tours.js"
import webhooks from "./migrations/0004_webhooks.js"
import deliveryFillfactor from "./migrations/0005_delivery_fillfactor.js"
import outboxPosition from "./migrations/0006_outbox_position.js"
import webhookRevision from "./migrations/0007_webhook_revision.js"
import deliveryCycles from "./migrations/0008_delivery_cycles.js"
import secretRotation from "./migrations/0009_secret_rotation.js"
import idempotencyKeys from "./migrations/0010_idempotency_keys.js"

/**
 * Every migration, keyed `NNNN_name` as the migrator expects.
 *
 * @since 0.1.0
 * @category migrations
 */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_workspaces_and_api_keys": workspacesAndApiKeys,
  "0002_drafts_and_events": draftsAndEvents,
  "0003_tours": tours,
  "0004_webhooks": webhooks,
  "0005_delivery_fillfactor": deliveryFillfactor,
  "0006_outbox_position": outboxPosition,
  "0007_webhook_revision": webhookRevision,
  "0008_delivery_cycles": deliveryCycles,
  "0009_secret_rotation": secretRotation,
  "0010_idempotency_keys": idempotencyKeys
}

/**
 * The table that records applied migrations.
 *
 * @since 0.1.0
 * @category migrations
 */
export const table = "waybill_migrations"

/**
 * Applies every pending migration in one transaction; concurrent starters wait on a table
 * lock (PostgreSQL), so several processes may start at once.
 *
 * @since 0.1.0
 * @category migrations
 */
export const run = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table }).pipe(
  // Processes that start at once on a fresh database race to create the migrations table
  // (`CREATE TABLE IF NOT EXISTS` is not safe against itself); the loser tries again and then
  // waits on the table lock like any later starter.
  Effect.retry({ times: 3, while: (error) => error instanceof SqlError })
)
