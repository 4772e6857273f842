import * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import { assert, describe, it, layer } from "@effect/vitest"
import type { Transactor } from "@waybill/core/Transactor"
import * as PropertyDefinition from "@waybill/events/PropertyDefinition"
import * as DeliveryStore from "@waybill/webhooks/DeliveryStore"
import * as Dispatcher from "@waybill/webhooks/Dispatcher"
import * as HostResolver from "@waybill/webhooks/HostResolver"
import * as SecretBox from "@waybill/webhooks/SecretBox"
import * as WebhookService from "@waybill/webhooks/WebhookService"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as PgDeliveryStore from "../src/PgDeliveryStore.js"
import * as PgEventOutbox from "../src/PgEventOutbox.js"
import * as PgFailureAlerts from "../src/PgFailureAlerts.js"
import * as PgOutboxReader from "../src/PgOutboxReader.js"
import * as PgWebhookRepository from "../src/PgWebhookRepository.js"
import * as Testing from "../src/Testing.js"

type Database = PgClient.PgClient | SqlClient.SqlClient | Transactor

/**
 * Runs a storage suite once per back end: always on PGlite, and on PostgreSQL when
 * `DATABASE_URL` is set; says so loudly when it is not.
 */
export const forEachBackend = <R>(
  name: string,
  adapters: (database: Layer.Layer<Database, unknown>) => Layer.Layer<R | Database, unknown>,
  suite: Parameters<ReturnType<typeof layer<R | Database, unknown>>>[1]
) => {
  for (const backend of Testing.backends()) {
    layer(adapters(Testing.layer(backend)), { timeout: "120 seconds" })(`${name} [${backend.name}]`, suite)
  }
  if (!process.env.DATABASE_URL) {
    describe(`${name} [postgres]`, () => {
      it.skip("NOT RUN: DATABASE_URL is not set, so this suite ran on PGlite only", () => {})
    })
  }
}

/**
 * The webhook engine (service and dispatcher) over the PostgreSQL adapters, with `sender` (an
 * `HttpSender` layer, scripted) as its HTTP sender and hooks.example.org resolving to a public address: the stack of the webhook
 * storage suites, for `forEachBackend`.
 */
export const webhookStack =
  <Sender>(sender: Layer.Layer<Sender>, settings: Parameters<typeof Dispatcher.layer>[0] = {}) =>
  (database: Layer.Layer<Database, unknown>) =>
    // Tests stop `run` with attempts that may never answer: no grace unless asked.
    Layer.mergeAll(
      WebhookService.layer({ allowPrivateTargets: false }),
      Dispatcher.layer({ shutdownGraceMs: 0, ...settings })
    ).pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          PgWebhookRepository.layer,
          PgDeliveryStore.layer,
          PgFailureAlerts.layer,
          PgOutboxReader.layer,
          PgEventOutbox.layer,
          SecretBox.layerMemory,
          HostResolver.layerStatic({ "hooks.example.org": ["93.184.215.14"] }),
          PropertyDefinition.layerFixed([]),
          sender
        )
      ),
      Layer.provideMerge(database)
    )

// Fans out until the webhook has `count` deliveries. The outbox is read below the oldest open
// transaction of the whole PostgreSQL cluster (PgOutboxReader), so another suite's transaction,
// in another database, may hold fresh events back for a moment: wait (real time) and read again.
export const fannedOut = (webhookId: string, count: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const dispatcher = yield* Dispatcher.Dispatcher
    for (let i = 0; i < 400; i++) {
      yield* dispatcher.fanOutAll
      const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = ${webhookId}`
      if (row!.n >= count) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))
    }
    assert.fail(`webhook ${webhookId}: fewer than ${count} deliveries fanned out`)
  })

/** One claim at the test clock's time, as `token`: up to 100 deliveries, 10 per webhook, leased for 30 s. */
export const claimAs = (token: string) =>
  Effect.flatMap(DeliveryStore.DeliveryStore, (store) =>
    Effect.flatMap(TestClock.currentTimeMillis, (now) =>
      store.claimDue({
        now,
        limit: 100,
        maxPerWebhook: 10,
        roomByWebhook: new Map(),
        leaseUntil: now + 30_000,
        leaseToken: token
      })
    )
  )
