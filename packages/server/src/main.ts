#!/usr/bin/env node
/**
 * Runs the reference server from the environment (`npm start`); stops gracefully on SIGINT and
 * SIGTERM, and on a bad setting with one line before anything is written.
 */
import "./internal/noPretenuring.js"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Database from "@waybill/store-pg/Database"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as AdjustableClock from "./AdjustableClock.js"
import { config, logFormat, type ServerConfig } from "./Config.js"
import * as DataDirLock from "./DataDirLock.js"
import * as Logs from "./Logs.js"
import { load } from "./ReferenceDataFile.js"
import * as Startup from "./Startup.js"

const serve = (settings: ServerConfig) =>
  Effect.gen(function* () {
    yield* DataDirLock.acquire(settings.database)
    const referenceData = yield* load(settings.referenceDataPath)
    // Loaded once the settings are known to be good, so a bad one is reported sooner.
    const [HttpMiddleware, Http, Observability, Server] = yield* Effect.promise(() =>
      Promise.all([
        import("@effect/platform/HttpMiddleware"),
        import("@waybill/http/Http"),
        import("./Observability.js"),
        import("./Server.js")
      ])
    )
    yield* Effect.logInfo(
      `Waybill starting on ${Startup.describeDatabase(settings)}, schema ${Database.schemaOf(settings.database)}`
    )
    if (settings.clockStart !== undefined) {
      yield* Effect.logWarning(
        `WAYBILL_CLOCK_START: the server's clock starts at ${new Date(settings.clockStart).toISOString()} (development only)`
      )
    }
    const options = settings.clockStart === undefined ? {} : { clock: AdjustableClock.make(settings.clockStart) }
    // Without an OTLP endpoint no spans are made, as nothing would export them; with one, the
    // request span is the middleware's, cheaper than the platform's (docs/decisions/0091).
    const tracing = settings.tracing
    const served = HttpMiddleware.withTracerDisabledWhen(Server.layer(settings, referenceData, options), () => true)
    const server = tracing === undefined ? served : Layer.provide(served, Observability.layerTracing(tracing))
    // Requests are measured only where the metrics can be read.
    const launched = Effect.withTracerEnabled(Layer.launch(server), tracing !== undefined).pipe(
      Effect.locally(Http.requestMetricsDisabled, settings.metricsToken === undefined),
      Effect.locally(Http.requestSpans, tracing !== undefined)
    )
    return yield* settings.logLevel === undefined ? launched : Logger.withMinimumLogLevel(launched, settings.logLevel)
  }).pipe(
    Effect.scoped,
    Effect.tapErrorCause((cause) => Startup.logFailure(cause, settings))
  )

const program = config.pipe(
  Effect.tapErrorCause((cause) => Startup.logFailure(cause)),
  Effect.flatMap(serve)
)

// The format is read before the rest, so that a bad setting is reported in it too; a bad format
// is reported (in text) with the others.
const format = Effect.runSync(Effect.orElseSucceed(logFormat, () => "text" as const))

// Ctrl-C under `npm start` arrives twice (terminal, then npm): a repeat is ignored while the
// database closes, unless 10 s have passed.
let firstSignalAt: number | undefined
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    const now = Date.now()
    if (firstSignalAt === undefined) firstSignalAt = now
    else if (now - firstSignalAt > 10_000) process.exit(130)
  })
}

// Started by npm, the server stops with it, even when npm is killed with SIGKILL.
if (process.env.npm_lifecycle_event !== undefined) {
  const parent = process.ppid
  setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, "SIGTERM")
  }, 500).unref()
}

program.pipe(
  Effect.provide(Logs.layer(format)),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
