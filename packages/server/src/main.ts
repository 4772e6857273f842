#!/usr/bin/env node
/**
 * Runs the reference server from the environment (`npm start`). Stops gracefully on SIGINT and
 * SIGTERM: the HTTP server closes, then the database. A setting or a database the server cannot
 * use stops it with one line naming the variable and the cause, before anything is written.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Database from "@waybill/store-pg/Database"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as AdjustableClock from "./AdjustableClock.js"
import { config, type ServerConfig } from "./Config.js"
import * as DataDirLock from "./DataDirLock.js"
import { load } from "./ReferenceDataFile.js"
import * as Startup from "./Startup.js"

let settings: ServerConfig | undefined

const program = Effect.gen(function* () {
  settings = yield* config
  // One process per embedded data directory (the keys tool takes the same lock).
  yield* DataDirLock.acquire(settings.database)
  const referenceData = yield* load(settings.referenceDataPath)
  // The HTTP server, its adapters and the tracer are loaded once the settings are known to be
  // good: a bad setting is reported in about half the time (and CPU) of loading all of them.
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
  // Without an OTLP endpoint the reference server exports no traces, so it makes no spans: a
  // span costs a stack trace and a few objects on every request and query, and the platform's
  // request span parses the URL and copies the headers (together about a tenth of a cheap
  // request's CPU). Events still store the trace of a request's `traceparent` (or a new one).
  // A host that embeds the packages keeps its own tracer.
  // With tracing, the request span is the middleware's (`Http.requestSpans`), not the platform's,
  // which parses the URL and sets an attribute per header (docs/decisions.md).
  const tracing = settings.tracing
  const served = HttpMiddleware.withTracerDisabledWhen(Server.layer(settings, referenceData, options), () => true)
  const server = tracing === undefined ? served : Layer.provide(served, Observability.layerTracing(tracing))
  // Requests are measured only where the metrics can be read.
  const launched = Effect.withTracerEnabled(Layer.launch(server), tracing !== undefined).pipe(
    Effect.locally(Http.requestMetricsDisabled, settings.metricsToken === undefined),
    Effect.locally(Http.requestSpans, tracing !== undefined)
  )
  return yield* settings.logLevel === undefined ? launched : Logger.withMinimumLogLevel(launched, settings.logLevel)
}).pipe(Effect.scoped)

// Ctrl-C under `npm start` reaches the server more than once (from the terminal, then relayed by
// npm), and a repeat after runMain's own handler is gone would exit on the spot, before the
// database is closed. So repeats are ignored while the shutdown runs; after 10 s, one more
// forces the exit.
let firstSignalAt: number | undefined
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    const now = Date.now()
    if (firstSignalAt === undefined) firstSignalAt = now
    else if (now - firstSignalAt > 10_000) process.exit(130)
  })
}

// Started by an npm script, the server stops with it: a parent that is killed (even with
// SIGKILL) leaves the server an orphan, seen here as a changed parent process id.
if (process.env.npm_lifecycle_event !== undefined) {
  const parent = process.ppid
  setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, "SIGTERM")
  }, 500).unref()
}

program.pipe(
  Effect.tapErrorCause((cause) => Effect.logError(Startup.report(cause, settings))),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
