/**
 * Waybill inside your own Node service: the reference server's ports on a database, served by the
 * API's web handler, with its two background loops; mount `handler`, call `close` on shutdown.
 * Configuration: docs/internals.md (Waybill).
 *
 * @since 0.1.0
 */

import * as Console from "@waybill/console/Console"
import * as Http from "@waybill/http/Http"
import * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { config, type ServerConfig } from "./Config.js"
import * as ReferenceDataFile from "./ReferenceDataFile.js"
import * as Server from "./Server.js"
import * as Startup from "./Startup.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Waybill {
  /**
   * `(Request) => Promise<Response>`: every route of the API, `/health`, `/openapi.json`, `/docs`,
   * and the operator console at `/console`.
   */
  readonly handler: (request: Request) => Promise<Response>
  /** Stops the background loops, then closes the database. */
  readonly close: () => Promise<void>
}

/**
 * How to build Waybill inside a host.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The variables the configuration is read from (docs/operations.md); `process.env` by default. */
  readonly env?: Record<string, string | undefined> | undefined
  /**
   * The path prefix the host serves the handler under (`"/waybill"` for
   * `app.use("/waybill", …)`): `/openapi.json` and `/docs` name it as their server.
   */
  readonly basePath?: string | undefined
}

/**
 * Opens the database (running its migrations), starts the background loops and builds the
 * handler. Fails at once, with one line naming the setting and the cause, on a bad
 * configuration or an unreachable database rather than on the first request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = async (options: Options = {}): Promise<Waybill> => {
  const variables = new Map<string, string>([["WAYBILL_DATA_DIR", "memory://"]])
  for (const [name, value] of Object.entries(options.env ?? process.env)) {
    if (value !== undefined) variables.set(name, value)
  }
  let settings: ServerConfig | undefined
  const scope = Effect.runSync(Scope.make())
  const opened = Effect.gen(function* () {
    settings = yield* config.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(variables)))
    if (Option.isNone(settings.apiKeys)) {
      return yield* Effect.fail(
        ConfigError.MissingData(["WAYBILL_API_KEYS"], "set workspaceId:key pairs, e.g. acme:a-long-random-key")
      )
    }
    const referenceData = yield* ReferenceDataFile.load(settings.referenceDataPath)
    const ports = Server.layerPorts(settings, referenceData)
    // Deliveries and tours happen in the background, as in the reference server.
    return yield* Layer.buildWithScope(Layer.provideMerge(Server.layerBackground(settings), ports), scope)
  })
  const exit = await Effect.runPromiseExit(opened)
  if (Exit.isFailure(exit)) {
    await Effect.runPromise(Scope.close(scope, exit))
    throw new Error(Startup.report(exit.cause, settings))
  }
  const web = Http.toWebHandler(Layer.succeedContext(exit.value), { basePath: options.basePath })
  return {
    // The operator console in front of the API: its page and assets, everything else to the API.
    handler: Console.toWebHandler({ next: (request) => web.handler(request) }),
    close: async () => {
      await web.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}
