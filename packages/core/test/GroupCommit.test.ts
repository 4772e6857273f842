import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import * as GroupCommit from "../src/GroupCommit.js"

// A writer whose writes never end; it records what each write took.
const held = Effect.gen(function* () {
  const writes: Array<ReadonlyArray<number>> = []
  const gate = yield* Deferred.make<void>()
  const write = (_key: string, items: ReadonlyArray<number>) =>
    Effect.zipRight(
      Effect.sync(() => writes.push(items)),
      Effect.as(Deferred.await(gate), items)
    )
  return { write, writes }
})

// Lets the writer and its write run as far as they can.
const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("GroupCommit", () => {
  // However far the writer got with the item (not yet handed it, handed it but not resumed,
  // writing it), its caller is answered.
  for (const yields of [1, 2, 3, 4]) {
    it.effect(
      `an item submitted to an idle writer ${yields} yield${yields === 1 ? "" : "s"} before its scope closes is interrupted, not left waiting`,
      () =>
        Effect.gen(function* () {
          const script = yield* held
          const caller = yield* Effect.scoped(
            Effect.gen(function* () {
              const submit = yield* GroupCommit.make({ key: () => "k", write: script.write })
              yield* settle
              const only = yield* Effect.fork(submit(1))
              yield* Effect.repeatN(Effect.yieldNow(), yields - 1)
              return only
            })
          )
          yield* settle
          const exit = yield* Fiber.poll(caller)
          assert.isTrue(exit._tag === "Some" && Exit.isInterrupted(exit.value), JSON.stringify(exit))
        })
    )
  }

  it.effect(
    "with a write in flight, its caller and that of an item submitted as the scope closes are interrupted",
    () =>
      Effect.gen(function* () {
        const script = yield* held
        const callers = yield* Effect.scoped(
          Effect.gen(function* () {
            const submit = yield* GroupCommit.make({ key: () => "k", write: script.write })
            const first = yield* Effect.fork(submit(1))
            yield* settle
            // The writer is idle again, its write in flight; this item reaches it as the scope closes.
            const last = yield* Effect.fork(submit(2))
            yield* Effect.yieldNow()
            return [first, last]
          })
        )
        yield* settle
        assert.deepStrictEqual(script.writes, [[1]], "the last item is never written")
        const exits = yield* Effect.forEach(callers, (caller) => Fiber.poll(caller))
        assert.deepStrictEqual(
          exits.map((exit) => exit._tag === "Some" && Exit.isInterrupted(exit.value)),
          [true, true],
          JSON.stringify(exits)
        )
      })
  )
})
