/**
 * Runs the reference server from the environment (`npm start`). Stops gracefully on SIGINT and
 * SIGTERM: the HTTP server closes, then the database.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Database from "@waybill/store-pg/Database"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as AdjustableClock from "./AdjustableClock.js"
import { config } from "./Config.js"
import * as DataDirLock from "./DataDirLock.js"
import { load } from "./ReferenceDataFile.js"
import * as Server from "./Server.js"

const program = Effect.gen(function* () {
  const settings = yield* config
  // One process per embedded data directory (the keys tool takes the same lock).
  yield* DataDirLock.acquire(settings.database)
  const referenceData = yield* load(settings.referenceDataPath)
  yield* Effect.logInfo(
    `Waybill starting on ${Database.describe(
      Server.databaseConfig(settings),
      Option.getOrUndefined(Option.map(settings.databaseUrl, Redacted.value))
    )}`
  )
  if (settings.clockStart !== undefined) {
    yield* Effect.logWarning(
      `WAYBILL_CLOCK_START: the server's clock starts at ${new Date(settings.clockStart).toISOString()} (development only)`
    )
  }
  const options = settings.clockStart === undefined ? {} : { clock: AdjustableClock.make(settings.clockStart) }
  return yield* Layer.launch(Server.layer(settings, referenceData, options))
}).pipe(Effect.scoped)

// Ctrl-C under `npm start` reaches the server more than once (from the terminal, then relayed by
// npm and tsx), and a repeat after runMain's own handler is gone would exit on the spot, before
// the database is closed. So repeats are ignored while the shutdown runs; after 10 s, one more
// forces the exit.
let firstSignalAt: number | undefined
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    const now = Date.now()
    if (firstSignalAt === undefined) firstSignalAt = now
    else if (now - firstSignalAt > 10_000) process.exit(130)
  })
}

program.pipe(
  Effect.catchTags({
    ConfigError: (error) => Effect.logError(`Configuration error: ${error}`).pipe(Effect.zipRight(Effect.fail(1))),
    ReferenceDataError: (error) => Effect.logError(error.message).pipe(Effect.zipRight(Effect.fail(1))),
    DataDirLockError: (error) => Effect.logError(error.message).pipe(Effect.zipRight(Effect.fail(1))),
    SecretKeyError: (error) => Effect.logError(error.message).pipe(Effect.zipRight(Effect.fail(1)))
  }),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
