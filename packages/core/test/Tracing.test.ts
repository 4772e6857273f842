import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Tracing from "../src/Tracing.js"

const spanName = Effect.map(
  Effect.option(Effect.currentSpan),
  Option.map((span) => span.name)
)

describe("Tracing.withSpan", () => {
  it.effect("makes the span while a tracer is on", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* spanName.pipe(Tracing.withSpan("Hot.path")), Option.some("Hot.path"))
    })
  )

  it.effect("makes none while the tracer is off, where Effect.withSpan still makes one", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* spanName.pipe(Tracing.withSpan("Hot.path")), Option.none())
      assert.deepStrictEqual(yield* spanName.pipe(Effect.withSpan("Hot.path")), Option.some("Hot.path"))
    }).pipe(Effect.withTracerEnabled(false))
  )

  it.effect("keeps the effect's result and failure", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* Effect.succeed(1).pipe(Tracing.withSpan("a")), 1)
      assert.strictEqual(yield* Effect.flip(Effect.fail("no").pipe(Tracing.withSpan("a"))), "no")
    })
  )
})
