/**
 * Waybill inside your own Node service: the reference server's ports and background loops behind
 * a web handler. It reads the server's variables but never issues a development key.
 * @since 0.1.0
 */

import type * as NodeHttp from "node:http"
import * as Console from "@waybill/console/Console"
import * as ApiKeys from "@waybill/core/ApiKeys"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Http from "@waybill/http/Http"
import * as InProcess from "@waybill/http/InProcess"
import { WaybillError } from "@waybill/http/WaybillError"
import * as Database from "@waybill/store-pg/Database"
import * as HostTransaction from "@waybill/store-pg/HostTransaction"
import type * as Clock from "effect/Clock"
import * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as AdjustableClock from "./AdjustableClock.js"
import { config, type ServerConfig } from "./Config.js"
import * as DataDirLock from "./DataDirLock.js"
import * as ClientErrors from "./internal/clientErrors.js"
import * as Logs from "./Logs.js"
import * as Observability from "./Observability.js"
import * as ReferenceDataFile from "./ReferenceDataFile.js"
import * as Server from "./Server.js"
import * as Startup from "./Startup.js"

/** A running Waybill: mount `handler`, call `close` on shutdown. @since 0.1.0 */
export interface Waybill {
  /** Every route of the API, `/openapi.json`, `/docs` and the operator console at `/console`. */
  readonly handler: (request: Request) => Promise<Response>
  /** The metrics now, in the Prometheus text format: serve it behind the host's own authentication. */
  readonly metrics: () => Promise<string>
  /**
   * One workspace's API in process (contract §9): every route a workspace has, as functions with the
   * HTTP routes' rules and answers, without HTTP or an API key; a refusal rejects with a `WaybillError`.
   * A bad workspace id throws one.
   */
  readonly forWorkspace: (workspaceId: string) => WorkspaceApi
  /** Stops the background loops, then closes the database; calls made after it reject (503). */
  readonly close: () => Promise<void>
}

/** One workspace's API in process: `Waybill.forWorkspace(id)`. @since 0.3.0 */
export interface WorkspaceApi extends InProcess.WorkspaceApi {
  readonly events: InProcess.WorkspaceApi["events"] & {
    /**
     * Publishes an event inside the transaction open on `executor` (a node-postgres `Client` or
     * `PoolClient`, or an adapter, docs/embedding.md): delivered once that transaction commits,
     * never if it rolls back. Checked as `POST /events` checks it before anything is sent.
     * PostgreSQL only (`DATABASE_URL`).
     */
    readonly publishIn: (
      executor: HostTransaction.Executor,
      event: InProcess.PublishEvent
    ) => Promise<InProcess.Published>
  }
}

/** What a refused in-process call rejects with (`status`, `code`, `message`, `issues`). @since 0.3.0 */
export { WaybillError }

/** Whether a value is a `WaybillError`, also one thrown by another copy of the package. @since 0.3.0 */
export { isWaybillError } from "@waybill/http/WaybillError"

/** How to build Waybill inside a host. @since 0.1.0 */
export interface Options {
  /** The variables the configuration is read from (docs/operations.md); `process.env` by default. */
  readonly env?: Record<string, string | undefined> | undefined
  /** The path prefix the host serves the handler under (`"/waybill"`), named as the API's server. */
  readonly basePath?: string | undefined
  /**
   * An Effect logger that writes Waybill's records instead of its own (`WAYBILL_LOG_FORMAT`'s);
   * `WAYBILL_LOG_LEVEL` still sets the least severe level logged.
   */
  readonly logger?: Logger.Logger<unknown, unknown> | undefined
}

const noKeys = ConfigError.MissingData(
  ["WAYBILL_API_KEYS"],
  "set workspaceId:key pairs (e.g. acme:a-long-random-key), or store keys in the database with waybill-keys; Waybill.make issues no development key"
)

/**
 * Opens the database (running its migrations), starts the background loops and builds the
 * handler; a bad configuration or an unreachable database fails here, in one line.
 * @since 0.1.0
 */
export const make = async (options: Options = {}): Promise<Waybill> => {
  const variables = new Map<string, string>([["WAYBILL_DATA_DIR", "memory://"]])
  for (const [name, value] of Object.entries(options.env ?? process.env)) {
    if (value !== undefined) variables.set(name, value)
  }
  let settings: ServerConfig | undefined
  let clock: Clock.Clock | undefined
  let logging: Layer.Layer<never> = Layer.empty
  const scope = Effect.runSync(Scope.make())
  // Closed first in `close`: the dispatcher drains while the handler still answers.
  const backgroundScope = Effect.runSync(Scope.fork(scope, ExecutionStrategy.sequential))
  const start = (configured: ServerConfig) =>
    Effect.gen(function* () {
      const inMemory = configured.database._tag === "Embedded" && configured.database.dataDir === "memory://"
      // A database in memory holds no stored key: refuse before opening it.
      if (Option.isNone(configured.apiKeys) && inMemory) return yield* Effect.fail(noKeys)
      yield* Scope.extend(DataDirLock.acquire(configured.database), scope)
      const referenceData = yield* ReferenceDataFile.load(configured.referenceDataPath)
      // The ports and the handler share the clock.
      clock = configured.clockStart === undefined ? undefined : AdjustableClock.make(configured.clockStart)
      const ports = yield* Layer.buildWithScope(
        Server.layerPorts(configured, referenceData, clock === undefined ? {} : { clock }),
        scope
      )
      if (Option.isNone(configured.apiKeys)) {
        const stored = yield* Effect.provide(ApiKeys.ApiKeys, ports).pipe(Effect.flatMap((keys) => keys.list))
        if (!stored.some((key) => key.revokedAt === null)) return yield* Effect.fail(noKeys)
      }
      const background = yield* Layer.buildWithScope(
        Layer.provide(
          Server.layerBackground(configured),
          clock === undefined
            ? Layer.succeedContext(ports)
            : Layer.merge(Layer.succeedContext(ports), Layer.setClock(clock))
        ),
        backgroundScope
      )
      return Context.merge(ports, background)
    })
  const opened = Effect.gen(function* () {
    settings = yield* config.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(variables)))
    const configured = settings
    logging =
      options.logger === undefined
        ? Logs.layer(configured.logFormat ?? "text", configured.logLevel)
        : Logs.layerWith(options.logger, configured.logLevel)
    // The background loops keep the logger they were started with.
    return yield* Effect.provide(start(configured), logging)
  })
  const exit = await Effect.runPromiseExit(opened)
  if (Exit.isFailure(exit)) {
    await Effect.runPromise(Scope.close(scope, exit))
    throw new Error(Startup.report(exit.cause, settings))
  }
  const web = toWebHandler(exit.value, {
    basePath: options.basePath,
    clock,
    logging,
    frameAncestors: settings?.consoleFrameAncestors
  })
  Observability.registerFixed()
  const metrics = Effect.provide(Observability.metricsText, exit.value)
  let closed = false
  const inProcess = InProcess.make({ isClosed: () => closed, basePath: options.basePath }).pipe(
    Effect.provide(exit.value),
    Effect.provide(logging)
  )
  const workspaceApi = Effect.runSync(clock === undefined ? inProcess : Effect.withClock(inProcess, clock))
  const publishIn = publisherIn(settings!, clock, () => closed)
  const forWorkspace = (workspaceId: string): WorkspaceApi => {
    const api = workspaceApi(workspaceId)
    // `workspaceApi` checked the id.
    const id = api.workspaceId as WorkspaceId
    return { ...api, events: { ...api.events, publishIn: (executor, event) => publishIn(executor, id, event) } }
  }
  return {
    handler: web.handler,
    metrics: () => Effect.runPromise(metrics),
    forWorkspace,
    // As the reference server stops (contract §8, "Shutdown"): not ready from the first moment,
    // the dispatcher drained while requests are answered, then the handler, then the database.
    close: async () => {
      closed = true
      await Effect.runPromise(Scope.close(backgroundScope, Exit.void).pipe(Effect.provide(logging)))
      await web.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}

const embeddedRefusal = new WaybillError({
  status: 400,
  message:
    "publishIn needs PostgreSQL (DATABASE_URL): the embedded database has no connection to share with a host's transaction; use events.publish",
  issues: [{ path: "executor", message: "cannot share a transaction with the embedded database" }]
})

// `publishIn` of `forWorkspace`: the storage-level publish, its failures as `WaybillError`s.
const publisherIn = (settings: ServerConfig, clock: Clock.Clock | undefined, isClosed: () => boolean) => {
  const schema = settings.database._tag === "Postgres" ? Database.schemaOf(settings.database) : undefined
  // The clock of the ports, for the event's time.
  const runtime = Effect.runSync(
    clock === undefined ? Effect.runtime<never>() : Effect.withClock(Effect.runtime<never>(), clock)
  )
  return (
    executor: HostTransaction.Executor,
    workspaceId: WorkspaceId,
    event: unknown
  ): Promise<InProcess.Published> => {
    const published =
      schema === undefined
        ? Effect.fail(embeddedRefusal)
        : HostTransaction.publishIn(executor, { schema, workspaceId }, event).pipe(
            Effect.map((recorded): InProcess.Published => ({ id: recorded.id })),
            Effect.mapError((error) =>
              error._tag === "ValidationError"
                ? new WaybillError({ status: 400, message: error.message, issues: error.issues })
                : new WaybillError({
                    status: 400,
                    message: error.message,
                    issues: [{ path: "executor", message: error.message }]
                  })
            )
          )
    return InProcess.runCall(runtime, isClosed, published)
  }
}

/**
 * The handler `make` serves, over ports the host built itself (`Server.layerPorts`); the console
 * may be framed by `frameAncestors`' origins. `dispose` stops the handler; the ports stay open for
 * their owner to close.
 * @since 0.1.0
 */
export const toWebHandler = (
  ports: Context.Context<Http.Requirements>,
  options: {
    readonly basePath?: string | undefined
    readonly clock?: Clock.Clock | undefined
    /** Sets the handler's logger (`Logs.layer`); the default logger otherwise. */
    readonly logging?: Layer.Layer<never> | undefined
    readonly frameAncestors?: ReadonlyArray<string> | undefined
  } = {}
): { readonly handler: (request: Request) => Promise<Response>; readonly dispose: () => Promise<void> } => {
  const context = Layer.merge(Layer.succeedContext(ports), options.logging ?? Layer.empty)
  const web = Http.toWebHandler(
    options.clock === undefined ? context : Layer.merge(context, Layer.setClock(options.clock)),
    { basePath: options.basePath }
  )
  return {
    handler: Console.toWebHandler({
      next: (request) => web.handler(request),
      frameAncestors: options.frameAncestors
    }),
    dispose: () => web.dispose()
  }
}

/**
 * Answers what a `node:http` server refuses before any handler sees a request (malformed 400, a
 * request deadline 408, headers too large 431, an HTTP version other than 1.x 505) with the
 * API's error body instead of Node's bare status line. Call it on the server that serves the
 * handler (Express's `app.listen(…)` returns it); `Server.makeNodeServer` does it already.
 * @since 0.2.0
 */
export const answerClientErrors: <S extends NodeHttp.Server>(server: S) => S = ClientErrors.install
