import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option, RuntimeFlags, RuntimeFlagsPatch, Supervisor, Tracer } from "effect"
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

// Steps a fiber takes running `effect`, counted by a supervisor of each step.
class Steps extends Supervisor.AbstractSupervisor<number> {
  count = 0
  get value() {
    return Effect.sync(() => this.count)
  }
  override onEffect(): void {
    this.count++
  }
}
const stepsOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const steps = new Steps()
    yield* Effect.exit(
      effect.pipe(
        Effect.supervised(steps),
        Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
      )
    )
    return steps.count
  })

// `self` under `onExitSync`, the exit `finish` saw kept in `seen`.
const ended = <A, E>(self: Effect.Effect<A, E>, seen: Array<Exit.Exit<A, E>>) =>
  Effect.withFiberRuntime<A, E>((_, running) => Tracing.onExitSync(self, running, (exit) => seen.push(exit)))

describe("Tracing.onExitSync", () => {
  const regions: ReadonlyArray<readonly [string, <A, E>(self: Effect.Effect<A, E>) => Effect.Effect<A, E>]> = [
    ["an interruptible fiber", (self) => self],
    ["an uninterruptible region", (self) => Effect.uninterruptible(self)]
  ]
  for (const [where, around] of regions) {
    it.effect(`in ${where}, finishes with the success or the failure, and keeps it`, () =>
      Effect.gen(function* () {
        const seen: Array<Exit.Exit<number, string>> = []
        assert.strictEqual(yield* around(ended(Effect.succeed(1), seen)), 1)
        assert.strictEqual(yield* Effect.flip(around(ended(Effect.fail("no"), seen))), "no")
        const died = yield* Effect.exit(around(ended(Effect.die("boom"), seen)))
        assert.deepStrictEqual(seen, [Exit.succeed(1), Exit.fail("no"), Exit.die("boom")])
        assert.deepStrictEqual(died, Exit.die("boom"))
      })
    )

    it.effect(`in ${where}, finishes an interrupted effect as interrupted`, () =>
      Effect.gen(function* () {
        const seen: Array<Exit.Exit<never, never>> = []
        const started = yield* Deferred.make<void>()
        // As a router runs its handler inside a platform's uninterruptible middleware.
        const fiber = yield* Effect.fork(
          around(ended(Effect.interruptible(Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)), seen))
        )
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        assert.strictEqual(seen.length, 1)
        assert.isTrue(Exit.isInterrupted(seen[0]!))
      })
    )
  }

  it.effect("takes fewer steps than Effect.onExit where the fiber is uninterruptible, as many where it is not", () =>
    Effect.gen(function* () {
      const viaOnExit = Effect.onExit(Effect.succeed(1), () => Effect.void)
      const viaSync = ended(Effect.succeed(1), [])
      assert.isBelow(yield* stepsOf(Effect.uninterruptible(viaSync)), yield* stepsOf(Effect.uninterruptible(viaOnExit)))
      assert.isAtLeast(yield* stepsOf(viaSync), yield* stepsOf(viaOnExit))
    })
  )
})

describe("Tracing.fiberSpan", () => {
  // `self` in a `fiberSpan` named `name` under `parent`; the span, and what `finish` saw of it.
  const inSpan = <A, E>(self: Effect.Effect<A, E>, parent: Option.Option<Tracer.AnySpan>) => {
    const seen: { span?: Tracer.Span; exit?: Exit.Exit<A, E>; statusAtFinish?: string } = {}
    const run = Effect.withFiberRuntime<A, E>((fiber, running) =>
      Tracing.fiberSpan(
        fiber,
        running,
        { name: "Hot.span", parent, kind: "client" },
        (span) => {
          seen.span = span
          span.attribute("first", 1)
          return self
        },
        (span, exit) => {
          seen.exit = exit
          seen.statusAtFinish = span.status._tag
        }
      )
    )
    return { run, seen }
  }

  it.effect("makes the span with the fiber's tracer under the parent, and ends it after finish saw the exit", () =>
    Effect.gen(function* () {
      const parent = Tracer.externalSpan({ traceId: "a".repeat(32), spanId: "b".repeat(16), sampled: true })
      const { run, seen } = inSpan(Effect.succeed(1), Option.some(parent))
      assert.strictEqual(yield* run, 1)
      const span = seen.span!
      assert.strictEqual(span.name, "Hot.span")
      assert.strictEqual(span.kind, "client")
      assert.strictEqual(span.traceId, parent.traceId)
      assert.deepStrictEqual(span.parent, Option.some(parent))
      assert.strictEqual(span.attributes.get("first"), 1)
      assert.strictEqual(seen.statusAtFinish, "Started")
      assert.deepStrictEqual(seen.exit, Exit.succeed(1))
      assert.strictEqual(span.status._tag, "Ended")
      if (span.status._tag === "Ended") assert.deepStrictEqual(span.status.exit, Exit.succeed(1))
    })
  )

  it.effect("ends the span of a failure and of an interruption with their exits", () =>
    Effect.gen(function* () {
      const failed = inSpan(Effect.fail("no"), Option.none())
      assert.strictEqual(yield* Effect.flip(failed.run), "no")
      assert.deepStrictEqual(failed.seen.exit, Exit.fail("no"))
      assert.strictEqual(failed.seen.span!.status._tag, "Ended")

      const started = yield* Deferred.make<void>()
      const interrupted = inSpan(Effect.zipRight(Deferred.succeed(started, undefined), Effect.never), Option.none())
      const fiber = yield* Effect.fork(interrupted.run)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(interrupted.seen.exit!))
      assert.strictEqual(interrupted.seen.span!.status._tag, "Ended")
    })
  )
})
