/**
 * Both log formats write a record as one line, its cause and annotations as fields; the JSON one
 * has the contract's `timestamp`, `level` and `message` first.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Logger, LogLevel } from "effect"
import * as Logs from "../src/Logs.js"

const logged = (format: Logs.Format, effect: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const lines: Array<string> = []
    const capture = Logger.map(Logs.loggerOf(format), (line) => {
      lines.push(line)
    })
    yield* Effect.provide(effect, Logs.layerWith(capture, LogLevel.All))
    return lines
  })

// A failure whose rendering spans lines: a message and a stack trace.
const failure = Effect.logError("A loop failed", Cause.die(new Error("first line\nsecond line"))).pipe(
  Effect.annotateLogs({ webhookId: "whk_1", attempt: 2, level: "not the level" })
)

describe("Logs", () => {
  it.effect("json: one object per line, the contract's fields, the cause and annotations as fields", () =>
    Effect.gen(function* () {
      const lines = yield* logged("json", Effect.zipRight(failure, Effect.logTrace("fine", { detail: 1 })))
      assert.strictEqual(lines.length, 2)
      for (const line of lines) assert.notInclude(line, "\n")
      const [error, trace] = lines.map((line) => JSON.parse(line))
      assert.deepStrictEqual(Object.keys(error).slice(0, 3), ["timestamp", "level", "message"])
      assert.deepInclude(error, { level: "error", message: "A loop failed", webhookId: "whk_1", attempt: 2 })
      assert.match(error.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.match(error.cause, /Error: first line\nsecond line\n\s+at /)
      // Effect's TRACE is below the contract's levels; a second message part joins the first.
      assert.deepInclude(trace, { level: "debug", message: 'fine {"detail":1}' })
    })
  )

  it.effect("text: Effect's logfmt, one line with the cause quoted", () =>
    Effect.gen(function* () {
      const lines = yield* logged("text", failure)
      assert.strictEqual(lines.length, 1)
      assert.match(
        lines[0]!,
        /^timestamp=\S+ level=ERROR fiber=#\d+ message="A loop failed" cause="Error: first line\\nsecond line\\n/
      )
      assert.include(lines[0]!, "webhookId=whk_1")
    })
  )
})
