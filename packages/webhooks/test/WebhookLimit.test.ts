/**
 * How many webhooks a workspace may hold (contract §5): one event fans out to at most that many.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { WebhookLimitReached, WebhookService } from "../src/WebhookService.js"
import { inWorkspace, makeLayer, ok, register, registration, wsA, wsB } from "./fixtures.js"

const remove = (id: string) => Effect.flatMap(WebhookService, (service) => service.delete(id)).pipe(inWorkspace(wsA))

const count = Effect.flatMap(WebhookService, (service) => service.list({ limit: 100 })).pipe(
  inWorkspace(wsA),
  Effect.map((page) => page.data.length)
)

describe("webhooks per workspace", () => {
  it.effect("the one past the limit is refused with WebhookLimitReached and stores nothing", () =>
    Effect.gen(function* () {
      const registered = []
      for (let i = 0; i < 3; i++) registered.push(yield* register(registration({ description: `${i}` })))
      const refused = yield* Effect.flip(register(registration({ description: "one too many" })))
      assert.instanceOf(refused, WebhookLimitReached)
      assert.deepStrictEqual(
        [refused._tag, refused._tag === "WebhookLimitReached" && refused.limit],
        ["WebhookLimitReached", 3]
      )
      assert.strictEqual(
        refused.message,
        "The workspace already has 3 webhooks, the most it may have; delete one before registering another."
      )
      assert.strictEqual(yield* count, 3)
      // Another workspace has its own count; a deletion makes room.
      yield* register(registration(), wsB)
      yield* remove(registered[0]!.id)
      yield* register(registration({ description: "in its place" }))
      assert.strictEqual(yield* count, 3)
      // An invalid registration is still a 400 first, at the limit too.
      const invalid = yield* Effect.flip(register({ url: "ftp://x" }))
      assert.strictEqual(invalid._tag, "ValidationError")
    }).pipe(Effect.provide(makeLayer({ respond: () => ok(), maxWebhooksPerWorkspace: 3 })))
  )

  it.effect("a workspace holds 100 by default, and registrations arriving together never pass it", () =>
    Effect.gen(function* () {
      for (let i = 0; i < 99; i++) yield* register(registration())
      const results = yield* Effect.all(
        Array.from({ length: 5 }, () => Effect.either(register(registration()))),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter((result) => result._tag === "Right").length, 1)
      assert.strictEqual(yield* count, 100)
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("a limit that is not a positive integer stops the service from being built", () =>
    Effect.gen(function* () {
      for (const bad of [0, -1, 1.5, Number.NaN]) {
        const exit = yield* Effect.exit(
          Layer.build(makeLayer({ respond: () => ok(), maxWebhooksPerWorkspace: bad })).pipe(Effect.scoped)
        )
        assert.isTrue(Exit.isFailure(exit), String(bad))
        assert.include(
          String(Exit.isFailure(exit) ? exit.cause : ""),
          "maxWebhooksPerWorkspace must be a positive integer"
        )
      }
    })
  )
})
