/**
 * The webhooks a workspace may hold (contract §5), held by the repository's one step of counting
 * and storing: registrations arriving together at the limit minus one store exactly one.
 */
import { assert } from "@effect/vitest"
import { WorkspaceId } from "@waybill/core/Workspace"
import { SealedSecret, type Webhook } from "@waybill/webhooks/Webhook"
import { WebhookRepository as WebhookRepositoryTag } from "@waybill/webhooks/WebhookRepository"
import { Effect, Layer, Schema } from "effect"
import * as PgWebhookRepository from "../src/PgWebhookRepository.js"
import { forEachBackend } from "./harness.js"

const wsA = Schema.decodeSync(WorkspaceId)("limit-a")
const wsB = Schema.decodeSync(WorkspaceId)("limit-b")

let counter = 0
const webhook = (workspaceId: WorkspaceId): Webhook => ({
  id: `whk_${String(++counter).padStart(26, "0")}`,
  workspaceId,
  url: "https://hooks.example.org/limit",
  events: ["tour-created"],
  filters: {},
  auth: { type: "bearer", token: Schema.decodeSync(SealedSecret)("sealed") },
  description: null,
  createdAt: 1_798_000_000,
  status: "enabled",
  rateLimitPerSecond: null,
  ordering: "none",
  revision: 1
})

const countOf = (workspaceId: WorkspaceId) =>
  Effect.flatMap(WebhookRepositoryTag, (repository) =>
    repository.list(workspaceId, { limit: 100, after: undefined })
  ).pipe(Effect.map((page) => page.data.length))

forEachBackend(
  "Webhook limit per workspace",
  (database) => PgWebhookRepository.layer.pipe(Layer.provideMerge(database)),
  (it) => {
    it.effect("stores up to the limit, then nothing; other workspaces are not counted", () =>
      Effect.gen(function* () {
        const repository = yield* WebhookRepositoryTag
        for (let i = 0; i < 3; i++) assert.isTrue(yield* repository.insert(webhook(wsB), 3))
        assert.isFalse(yield* repository.insert(webhook(wsB), 3))
        assert.strictEqual(yield* countOf(wsB), 3)
        const first = (yield* repository.list(wsB, { limit: 1, after: undefined })).data[0]!
        assert.isTrue(yield* repository.delete(wsB, first.id))
        assert.isTrue(yield* repository.insert(webhook(wsB), 3))
        assert.isTrue(yield* repository.insert(webhook(wsA), 1))
      })
    )

    it.effect("of registrations arriving together at the limit minus one, exactly one is stored", () =>
      Effect.gen(function* () {
        const repository = yield* WebhookRepositoryTag
        const limit = 10
        const before = yield* countOf(wsA)
        for (let i = before; i < limit - 1; i++) assert.isTrue(yield* repository.insert(webhook(wsA), limit))
        const stored = yield* Effect.all(
          Array.from({ length: 12 }, () => repository.insert(webhook(wsA), limit)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(stored.filter(Boolean).length, 1)
        assert.strictEqual(yield* countOf(wsA), limit)
      })
    )
  }
)
