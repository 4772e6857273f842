/**
 * The sweep loop of the reference server: at start and then every interval it deletes the
 * previous webhook secrets whose overlap has ended, and only those.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Idempotency from "@waybill/core/Idempotency"
import { WorkspaceId } from "@waybill/core/Workspace"
import type { SealedSecret, Webhook } from "@waybill/webhooks/Webhook"
import * as WebhookRepository from "@waybill/webhooks/WebhookRepository"
import { Effect, Layer, Option, Schema, TestClock } from "effect"
import * as Sweeps from "../src/Sweeps.js"

const ws = Schema.decodeSync(WorkspaceId)("sweeps")
const sealed = (text: string) => text as SealedSecret

const webhook = (id: string, expiresAt: number): Webhook => ({
  id,
  workspaceId: ws,
  url: "https://hooks.example.org",
  events: ["tour-created"],
  filters: {},
  auth: {
    type: "hmac",
    secret: sealed("v1.current"),
    scheme: "waybill",
    previous: { secret: sealed("v1.old"), expiresAt }
  },
  description: null,
  createdAt: 0,
  revision: 1,
  status: "enabled",
  rateLimitPerSecond: null,
  ordering: "none"
})

const previousOf = (id: string) =>
  Effect.flatMap(WebhookRepository.WebhookRepository, (repository) => repository.get(ws, id)).pipe(
    Effect.map((found) => {
      const auth = Option.getOrThrow(found).auth
      return auth.type === "hmac" ? auth.previous?.expiresAt : undefined
    })
  )

describe("Sweeps.layerLoop", () => {
  it.scoped("deletes expired previous secrets and kept answers, at start and every interval", () =>
    Effect.gen(function* () {
      const repository = yield* WebhookRepository.WebhookRepository
      const store = yield* Idempotency.IdempotencyStore
      yield* repository.insert(webhook("whk_due", 0), 100)
      yield* repository.insert(webhook("whk_later", 60), 100)
      const kept = (key: string, expiresAt: number) =>
        store.insert({
          workspaceId: ws,
          key,
          operation: "POST /events",
          fingerprint: "f",
          status: 202,
          body: "{}",
          createdAt: 0,
          expiresAt
        })
      yield* kept("key-due", 0)
      yield* kept("key-later", 60)
      yield* Layer.build(Sweeps.layerLoop("10 seconds"))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* previousOf("whk_due"), undefined)
      assert.strictEqual(yield* previousOf("whk_later"), 60)
      assert.isTrue(Option.isNone(yield* store.find(ws, "key-due")))
      assert.isTrue(Option.isSome(yield* store.find(ws, "key-later")))
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(yield* previousOf("whk_later"), undefined)
      assert.isTrue(Option.isNone(yield* store.find(ws, "key-later")))
    }).pipe(Effect.provide(Layer.merge(WebhookRepository.layerMemory, Idempotency.layerMemory)))
  )
})
