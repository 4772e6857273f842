import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Layer, Logger } from "effect"
import * as Availability from "../src/Availability.js"

class Unreachable extends Error {}

// The log of `self`: each entry's level and message.
const logOf = <A, E>(self: Effect.Effect<A, E, Availability.Availability>, isOutage: (defect: unknown) => boolean) =>
  Effect.gen(function* () {
    const entries: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      entries.push(`${logLevel.label} ${Array.isArray(message) ? message[0] : message}`)
    })
    yield* self.pipe(
      Effect.provide(
        Layer.merge(
          Logger.replace(Logger.defaultLogger, logger),
          Layer.succeed(Availability.Availability, { check: Effect.succeed(false), isOutage })
        )
      )
    )
    return entries
  })

describe("Availability.loopReporter", () => {
  it.effect("says an outage once when met and once when over, however many turns fail", () =>
    Effect.gen(function* () {
      const entries = yield* logOf(
        Effect.gen(function* () {
          const reporter = yield* Availability.loopReporter("the test loop", "The test loop failed")
          yield* reporter.succeeded
          for (let i = 0; i < 10; i++) yield* reporter.failed(Cause.die(new Unreachable("refused")))
          yield* reporter.succeeded
          yield* reporter.succeeded
          yield* reporter.failed(Cause.die(new Unreachable("refused")))
          yield* reporter.succeeded
        }),
        (defect) => defect instanceof Unreachable
      )
      assert.deepStrictEqual(
        entries.map((entry) => entry.replace(/\d+\.\d s/, "N s")),
        [
          "WARN The database cannot be reached: the test loop waits until it is back",
          "INFO The database is back: the test loop runs again (it waited N s)",
          "WARN The database cannot be reached: the test loop waits until it is back",
          "INFO The database is back: the test loop runs again (it waited N s)"
        ]
      )
    })
  )

  it.effect("reports every other failure as an error", () =>
    Effect.gen(function* () {
      const entries = yield* logOf(
        Effect.gen(function* () {
          const reporter = yield* Availability.loopReporter("the test loop", "The test loop failed")
          yield* reporter.failed(Cause.die(new Error("a bug")))
          yield* reporter.failed(Cause.die(new Error("a bug")))
          yield* reporter.succeeded
        }),
        (defect) => defect instanceof Unreachable
      )
      assert.deepStrictEqual(entries, ["ERROR The test loop failed", "ERROR The test loop failed"])
    })
  )
})
