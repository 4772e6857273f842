/**
 * Waybill inside your own Node service: the reference server's ports (storage, keys, webhooks,
 * tour generation) on a database, served by the API's Fetch-style web handler, plus the two
 * background loops the server would run (webhook dispatcher, tour generator). Mount `handler`
 * in any framework; call `close` on shutdown.
 *
 * Configuration is the reference server's (docs/operations.md), read from the given variables,
 * except that the embedded database defaults to `memory://` here.
 *
 * @since 0.1.0
 */

import * as Console from "@waybill/console/Console"
import { config } from "@waybill/example-server/Config"
import * as Generation from "@waybill/example-server/Generation"
import * as ReferenceDataFile from "@waybill/example-server/ReferenceDataFile"
import * as Server from "@waybill/example-server/Server"
import * as Http from "@waybill/http/Http"
import { Dispatcher } from "@waybill/webhooks/Dispatcher"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"

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

// Deliveries and tours happen in the background, as in the reference server.
const background = (intervalMs: number) =>
  Layer.mergeAll(
    Layer.scopedDiscard(Effect.flatMap(Dispatcher, (dispatcher) => Effect.forkScoped(dispatcher.run))),
    Generation.layerLoop(intervalMs)
  )

/**
 * Opens the database, starts the background loops and builds the handler. Fails at once on a
 * bad configuration or an unreachable database rather than on the first request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = async (env: Record<string, string | undefined> = process.env): Promise<Waybill> => {
  const variables = new Map<string, string>([["WAYBILL_DATA_DIR", "memory://"]])
  for (const [name, value] of Object.entries(env)) if (value !== undefined) variables.set(name, value)
  const settings = await Effect.runPromise(config.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(variables))))
  if (Option.isNone(settings.apiKeys)) {
    throw new Error("Set WAYBILL_API_KEYS to workspaceId:key pairs, e.g. WAYBILL_API_KEYS=acme:a-long-random-key")
  }
  const referenceData = await Effect.runPromise(ReferenceDataFile.load(settings.referenceDataPath))

  const ports = Server.layerPorts(settings, referenceData)
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(Layer.provideMerge(background(settings.generatorIntervalMs), ports), scope)
  )
  const web = Http.toWebHandler(Layer.succeedContext(context))
  return {
    // The operator console in front of the API: its page and assets, everything else to the API.
    handler: Console.toWebHandler({ next: (request) => web.handler(request) }),
    close: async () => {
      await web.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}
