/**
 * The reference server: every adapter wired to the HTTP API on a Node HTTP server.
 * `main.ts` runs it from the environment; tests start it on an ephemeral port.
 *
 * @since 0.1.0
 */

import { createServer } from "node:http"
import { join } from "node:path"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Console from "@waybill/console/Console"
import * as ApiKeys from "@waybill/core/ApiKeys"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as DraftService from "@waybill/drafts/DraftService"
import * as ProductEvaluator from "@waybill/drafts/ProductEvaluator"
import * as ReferenceData from "@waybill/drafts/ReferenceData"
import * as PropertyDefinitions from "@waybill/events/PropertyDefinition"
import * as Http from "@waybill/http/Http"
import * as WebhookSender from "@waybill/http/WebhookSender"
import * as ApiKeyStore from "@waybill/store-pg/ApiKeyStore"
import * as Database from "@waybill/store-pg/Database"
import * as DeliveryStore from "@waybill/store-pg/DeliveryStore"
import * as DraftRepository from "@waybill/store-pg/DraftRepository"
import * as EventOutbox from "@waybill/store-pg/EventOutbox"
import * as FailureAlerts from "@waybill/store-pg/FailureAlerts"
import * as OutboxReader from "@waybill/store-pg/OutboxReader"
import * as WebhookRepository from "@waybill/store-pg/WebhookRepository"
import * as Dispatcher from "@waybill/webhooks/Dispatcher"
import * as EventIntake from "@waybill/webhooks/EventIntake"
import * as SecretBox from "@waybill/webhooks/SecretBox"
import * as WebhookService from "@waybill/webhooks/WebhookService"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { ServerConfig } from "./Config.js"
import * as Generation from "./Generation.js"
import type { ReferenceDataFile } from "./ReferenceDataFile.js"
import * as SecretKey from "./SecretKey.js"

/**
 * The workspace of the development key issued when no key is configured.
 *
 * @since 0.1.0
 * @category constants
 */
export const developmentWorkspace = Schema.decodeSync(WorkspaceId)("default")

/**
 * Where the embedded database keeps its files inside the data directory.
 *
 * @since 0.1.0
 * @category utils
 */
export const databaseConfig = (config: ServerConfig): Database.DatabaseConfig =>
  config.database._tag === "Embedded" && config.database.dataDir !== "memory://"
    ? { ...config.database, dataDir: join(config.database.dataDir, "pglite") }
    : config.database

// With no configured keys and none on file, issue one for local use and print it once.
const developmentKey = (config: ServerConfig) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      if (Option.isSome(config.apiKeys)) return
      const keys = yield* ApiKeys.ApiKeys
      const active = (yield* keys.list).filter((key) => key.revokedAt === null)
      if (active.length > 0) {
        yield* Effect.logInfo(`${active.length} API key(s) on file; manage them with npm run keys`)
        return
      }
      const { key } = yield* keys.create(developmentWorkspace)
      const url = `http://${config.host === "0.0.0.0" ? "127.0.0.1" : config.host}:${config.port}`
      yield* Effect.sync(() =>
        console.log(
          [
            "",
            "  Waybill development API key (shown once; it is stored hashed):",
            `    ${Redacted.value(key)}`,
            `  Try: curl -H "Authorization: Bearer ${Redacted.value(key)}" ${url}/transport-shapes`,
            `  API reference: ${url}/docs`,
            ""
          ].join("\n")
        )
      )
    })
  )

/**
 * Every port the API needs, over the database.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPorts = (
  config: ServerConfig,
  referenceData: ReferenceDataFile,
  options: Generation.Options = {}
) => {
  const keys = ApiKeys.layer(Option.getOrElse(config.apiKeys, () => [])).pipe(Layer.provide(ApiKeyStore.layer))
  // Drafts with tour generation: an activated master gets its tours right away.
  const drafts = Generation.withTours(DraftService.layer, options).pipe(
    Layer.provideMerge(Layer.mergeAll(DraftRepository.layer, ProductEvaluator.layerReference))
  )
  const webhooks = Layer.mergeAll(
    WebhookService.layer({ allowPrivateTargets: config.allowPrivateTargets }),
    Dispatcher.layer({
      timeoutMs: config.deliveryTimeoutMs,
      retryDelayMs: config.retryDelayMs,
      leaseMs: config.deliveryLeaseMs
    })
  ).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        WebhookRepository.layer,
        DeliveryStore.layer,
        OutboxReader.layer,
        FailureAlerts.layer,
        WebhookSender.layer({ allowPrivateTargets: config.allowPrivateTargets }),
        WebhookSender.layerResolver,
        Layer.unwrapEffect(Effect.map(SecretKey.resolve(config), SecretBox.layerAesGcm))
      )
    )
  )
  return Layer.mergeAll(keys, drafts, webhooks, EventIntake.layerGroupCommit).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        EventOutbox.layer,
        ReferenceData.layerMemory(referenceData),
        PropertyDefinitions.layerFixed(referenceData.propertyDefinitions)
      )
    ),
    Layer.provideMerge(Database.layer(databaseConfig(config)))
  )
}

// The dispatcher fans out and delivers in the background for as long as the server runs. On
// PostgreSQL, a notification on the events channel wakes it at once (any process may have
// written the event); PGlite has no LISTEN, so there it polls (and in-process publishers wake it).
// A lost connection (the database restarted) ends the notifications: the server listens again
// every second until it can, meanwhile polling, and logs the loss and the return once each.
const dispatching = (config: ServerConfig) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const dispatcher = yield* Dispatcher.Dispatcher
      yield* Effect.forkScoped(dispatcher.run)
      if (config.database._tag === "Postgres") {
        const pg = yield* PgClient.PgClient
        let lost = false
        const channel = EventOutbox.channelOf(Database.schemaOf(databaseConfig(config)))
        const listening = pg.listen(channel).pipe(
          Stream.runForEach(() => {
            if (!lost) return dispatcher.wake
            lost = false
            return Effect.zipRight(Effect.logInfo("Event notifications are back"), dispatcher.wake)
          })
        )
        yield* listening.pipe(
          Effect.catchAllCause((cause) =>
            lost || Cause.isInterruptedOnly(cause)
              ? Effect.void
              : Effect.sync(() => {
                  lost = true
                }).pipe(Effect.zipRight(Effect.logWarning("Event notifications lost; polling until they are back")))
          ),
          // Whatever was written meanwhile is found by the next poll; listening resumes here.
          Effect.zipRight(Effect.sleep("1 second")),
          Effect.zipRight(dispatcher.wake),
          Effect.forever,
          Effect.forkScoped
        )
      }
    })
  )

/**
 * The work a server does besides answering requests, for as long as the layer lives: the webhook
 * dispatcher (woken by PostgreSQL's notifications where there are any) and the tour generator's
 * loop. Hosts that build the ports themselves run it beside them (`Waybill.make` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerBackground = (config: ServerConfig) =>
  Layer.mergeAll(dispatching(config), Generation.layerLoop(config.generatorIntervalMs))

/**
 * The whole server. It exposes the `HttpServer` (to read the bound address) and its ports
 * (for tests that inspect storage or run the tour generator). `options.clock`, when given, is
 * the clock of the whole server (tests move time with `AdjustableClock`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: ServerConfig, referenceData: ReferenceDataFile, options: Generation.Options = {}) => {
  const ports = layerPorts(config, referenceData, options)
  const server = Layer.mergeAll(
    // The API, its reference at /docs, and the operator console at /console.
    Http.layerServerWith(Console.layer()),
    layerBackground(config)
  ).pipe(
    // The development key is printed before the server says where it listens.
    Layer.provideMerge(developmentKey(config)),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: config.port, host: config.host })),
    Layer.provideMerge(ports)
  )
  return options.clock === undefined ? server : Layer.provide(server, Layer.setClock(options.clock))
}

/**
 * The bound base URL of a running server.
 *
 * @since 0.1.0
 * @category utils
 */
export const baseUrl = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress"
    ? `http://${server.address.hostname.includes(":") ? `[${server.address.hostname}]` : server.address.hostname}:${server.address.port}`
    : `unix:${server.address.path}`
)
