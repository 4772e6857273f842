/**
 * The reference server: every adapter wired to the HTTP API on a Node HTTP server.
 * `main.ts` runs it from the environment; tests start it on an ephemeral port.
 * @since 0.1.0
 */

import * as NodeHttp from "node:http"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Console from "@waybill/console/Console"
import * as ApiKeys from "@waybill/core/ApiKeys"
import * as ConsoleTokens from "@waybill/core/ConsoleTokens"
import * as Idempotency from "@waybill/core/Idempotency"
import * as Stopping from "@waybill/core/Stopping"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as DraftService from "@waybill/drafts/DraftService"
import * as ProductEvaluator from "@waybill/drafts/ProductEvaluator"
import * as ReferenceData from "@waybill/drafts/ReferenceData"
import * as EventIntake from "@waybill/events/EventIntake"
import * as PropertyDefinitions from "@waybill/events/PropertyDefinition"
import * as Http from "@waybill/http/Http"
import * as WebhookSender from "@waybill/sender/WebhookSender"
import * as Database from "@waybill/store-pg/Database"
import * as PgApiKeyStore from "@waybill/store-pg/PgApiKeyStore"
import * as PgConsoleTokenStore from "@waybill/store-pg/PgConsoleTokenStore"
import * as PgDeliveryStore from "@waybill/store-pg/PgDeliveryStore"
import * as PgDraftRepository from "@waybill/store-pg/PgDraftRepository"
import * as PgEventOutbox from "@waybill/store-pg/PgEventOutbox"
import * as PgFailureAlerts from "@waybill/store-pg/PgFailureAlerts"
import * as PgIdempotencyStore from "@waybill/store-pg/PgIdempotencyStore"
import * as PgOutboxReader from "@waybill/store-pg/PgOutboxReader"
import * as PgRetention from "@waybill/store-pg/PgRetention"
import * as PgWebhookRepository from "@waybill/store-pg/PgWebhookRepository"
import * as Dispatcher from "@waybill/webhooks/Dispatcher"
import * as Retention from "@waybill/webhooks/Retention"
import * as SecretBox from "@waybill/webhooks/SecretBox"
import * as WebhookService from "@waybill/webhooks/WebhookService"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { databaseConfig, defaultMaxConnections, defaultRequestTimeoutMs, type ServerConfig } from "./Config.js"
import * as Generation from "./Generation.js"
import * as ClientErrors from "./internal/clientErrors.js"
import * as Observability from "./Observability.js"
import type { ReferenceDataFile } from "./ReferenceDataFile.js"
import * as SecretKey from "./SecretKey.js"
import { keysCommand } from "./Startup.js"
import * as Sweeps from "./Sweeps.js"

/** The workspace of the development key issued when no key is configured. @since 0.1.0 */
export const developmentWorkspace = Schema.decodeSync(WorkspaceId)("default")

// With no configured keys and none on file, issue one for local use and print it once (a banner for
// a person at a terminal, not a log record).
const developmentKey = (config: ServerConfig) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      if (Option.isSome(config.apiKeys)) return
      const keys = yield* ApiKeys.ApiKeys
      const active = (yield* keys.list).filter((key) => key.revokedAt === null)
      if (active.length > 0) {
        yield* Effect.logInfo(`${active.length} API key(s) on file; manage them with ${keysCommand}`)
        return
      }
      // A key is never written into a JSON log, which is meant for a log pipeline (docs/decisions/0125).
      if (config.logFormat === "json") {
        yield* Effect.logWarning(
          `No API key is configured or stored, and with WAYBILL_LOG_FORMAT=json no development key is printed: set WAYBILL_API_KEYS or create a key with ${keysCommand} create --workspace default`
        )
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
            `  Operator console: ${url}/console`,
            ""
          ].join("\n")
        )
      )
    })
  )

/** Every port the API needs, over the database. @since 0.1.0 */
export const layerPorts = (
  config: ServerConfig,
  referenceData: ReferenceDataFile,
  options: Generation.Options = {}
) => {
  const keys = Layer.merge(
    ApiKeys.layer(Option.getOrElse(config.apiKeys, () => [])).pipe(Layer.provide(PgApiKeyStore.layer)),
    ConsoleTokens.layer.pipe(Layer.provide(PgConsoleTokenStore.layer))
  )
  // Drafts with tour generation: an activated master gets its tours right away.
  const drafts = Generation.withTours(DraftService.layer, options).pipe(
    Layer.provideMerge(Layer.mergeAll(PgDraftRepository.layer, ProductEvaluator.layerReference))
  )
  const webhooks = Layer.mergeAll(
    WebhookService.layer({
      allowPrivateTargets: config.allowPrivateTargets,
      maxWebhooksPerWorkspace: config.maxWebhooksPerWorkspace
    }),
    Dispatcher.layer({
      timeoutMs: config.deliveryTimeoutMs,
      retryDelayMs: config.retryDelayMs,
      leaseMs: config.deliveryLeaseMs,
      shutdownGraceMs: config.shutdownGraceMs,
      disableAfterFailures: config.disableAfterFailures
    })
  ).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        PgWebhookRepository.layer,
        PgDeliveryStore.layer,
        PgOutboxReader.layer,
        PgFailureAlerts.layer,
        WebhookSender.layer({ allowPrivateTargets: config.allowPrivateTargets }),
        WebhookSender.layerResolver,
        Layer.unwrapEffect(Effect.map(SecretKey.resolve(config), SecretBox.layerAesGcm))
      )
    )
  )
  return Layer.mergeAll(
    keys,
    drafts,
    webhooks,
    EventIntake.layerGroupCommit,
    Idempotency.layer,
    Retention.layerRanges
  ).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        Stopping.layer,
        PgRetention.layer,
        Layer.succeed(Retention.Window, {
          retentionMs: config.retentionMs ?? Retention.defaultRetentionMs
        }),
        PgEventOutbox.layer,
        PgIdempotencyStore.layer,
        ReferenceData.layerMemory(referenceData),
        PropertyDefinitions.layerFixed(referenceData.propertyDefinitions)
      )
    ),
    Layer.provideMerge(Database.layer(databaseConfig(config)))
  )
}

// On PostgreSQL a notification wakes the dispatcher (any process may have written the event),
// unless this process's fan-out has read past it already; PGlite has no LISTEN, so it polls.
// After a lost connection it listens again every second, polling meanwhile.
const dispatching = (config: ServerConfig) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const dispatcher = yield* Dispatcher.Dispatcher
      yield* Effect.forkScoped(dispatcher.run)
      if (config.database._tag === "Postgres") {
        const notifications = yield* Database.Notifications
        let lost = false
        const channel = PgEventOutbox.channelOf(Database.schemaOf(databaseConfig(config)))
        const horizon = yield* PgOutboxReader.ReadHorizon
        const listening = notifications.listen(channel).pipe(
          Stream.runForEach((notification) => {
            if (!lost) return horizon.covers(notification) ? Effect.void : dispatcher.wake
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
 * The work a server does besides answering requests: the webhook dispatcher, the tour generator's
 * loop and the sweeps of expired data. Hosts that build the ports themselves run it beside them.
 * Closing it is a stop: `Stopping` is raised first (readiness 503), then the loops drain.
 * @since 0.1.0
 */
export const layerBackground = (config: ServerConfig) =>
  // Built after the loops, so its finalizer runs before theirs.
  Stopping.layerOnStop.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        dispatching(config),
        Generation.layerLoop(config.generatorIntervalMs),
        Sweeps.layerLoop(),
        Retention.layerLoop
      )
    )
  )

/**
 * The Node HTTP server the reference server listens with: a request not fully arrived within
 * `requestTimeoutMs` (checked every tenth of it, at most 1 s) is answered 408, at most
 * `maxConnections` connections are open at once (`onDrop` hears of each one refused), and what
 * Node refuses carries the API's error body (`Waybill.answerClientErrors`).
 * @since 0.1.0
 */
export const makeNodeServer = (
  options: { readonly requestTimeoutMs: number; readonly maxConnections: number },
  onDrop: (refused: number) => void = () => {}
): NodeHttp.Server => {
  const server = NodeHttp.createServer({
    requestTimeout: options.requestTimeoutMs,
    headersTimeout: options.requestTimeoutMs,
    // Node checks the deadline every 30 s unless told: here within 10 % (at most 1 s) of it.
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(options.requestTimeoutMs / 10)))
  })
  server.maxConnections = options.maxConnections
  server.on("drop", () => onDrop(options.maxConnections))
  return ClientErrors.install(server)
}

// At most one warning a minute, with the count since the last.
const dropWarnings = (runtime: Runtime.Runtime<never>) => {
  let loggedAt = 0
  let unlogged = 0
  return (cap: number) => {
    unlogged++
    const now = Date.now()
    if (now - loggedAt < 60_000) return
    const count = unlogged
    loggedAt = now
    unlogged = 0
    Runtime.runFork(runtime)(
      Effect.logWarning(
        `Connections refused: ${count} since the last report, the server already holding WAYBILL_MAX_CONNECTIONS (${cap}) open connections`
      )
    )
  }
}

/** The Node HTTP server layer of the reference server, with its deadline and connection cap. @since 0.1.0 */
export const layerNodeServer = (config: ServerConfig) =>
  Layer.unwrapEffect(
    Effect.map(Effect.runtime<never>(), (runtime) => {
      const onDrop = dropWarnings(runtime)
      return NodeHttpServer.layer(
        () =>
          makeNodeServer(
            {
              requestTimeoutMs: config.requestTimeoutMs ?? defaultRequestTimeoutMs,
              maxConnections: config.maxConnections ?? defaultMaxConnections
            },
            onDrop
          ),
        { port: config.port, host: config.host }
      )
    })
  )

/**
 * The whole server, exposing the `HttpServer` and its ports (for tests); `options.clock` is the
 * clock of the whole server.
 * @since 0.1.0
 */
export const layer = (config: ServerConfig, referenceData: ReferenceDataFile, options: Generation.Options = {}) => {
  const ports = layerPorts(config, referenceData, options)
  const consoleRoutes = Console.layer({ frameAncestors: config.consoleFrameAncestors })
  const serving = Layer.mergeAll(
    Http.layerServerWith(
      config.metricsToken === undefined
        ? consoleRoutes
        : Layer.merge(consoleRoutes, Observability.layerMetricsRoute(config.metricsToken))
    ),
    // Where an operator goes next, once the server listens.
    Layer.effectDiscard(
      Effect.flatMap(baseUrl, (url) =>
        Effect.logInfo(`API reference at ${url}/docs, operator console at ${url}/console`)
      )
    )
  )
  // Built after the routes, so a stop (finalizers in reverse) first says it is stopping and
  // drains the dispatcher while requests are still answered, then closes the server.
  const server = layerBackground(config).pipe(
    Layer.provideMerge(serving),
    // The development key is printed before the server says where it listens.
    Layer.provideMerge(developmentKey(config)),
    Layer.provideMerge(layerNodeServer(config)),
    Layer.provideMerge(ports)
  )
  return options.clock === undefined ? server : Layer.provide(server, Layer.setClock(options.clock))
}

/** The bound base URL of a running server. @since 0.1.0 */
export const baseUrl = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress"
    ? `http://${server.address.hostname.includes(":") ? `[${server.address.hostname}]` : server.address.hostname}:${server.address.port}`
    : `unix:${server.address.path}`
)
