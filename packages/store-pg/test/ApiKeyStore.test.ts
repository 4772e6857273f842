import { assert } from "@effect/vitest"
import * as ApiKeys from "@waybill/core/ApiKeys"
import { WorkspaceId } from "@waybill/core/Workspace"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import * as ApiKeyStore from "../src/PgApiKeyStore.js"
import { forEachBackend } from "./harness.js"

const acme = Schema.decodeSync(WorkspaceId)("acme")

forEachBackend(
  "ApiKeyStore",
  (database) => ApiKeys.layer([]).pipe(Layer.provideMerge(ApiKeyStore.layer), Layer.provideMerge(database)),
  (it) => {
    it.effect("stores only the hash, authenticates, lists and revokes", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys.ApiKeys
        const store = yield* ApiKeys.ApiKeyStore
        const { key, record } = yield* keys.create(acme)
        const stored = yield* store.find(record.id)
        assert.isTrue(Option.isSome(stored))
        if (Option.isSome(stored)) {
          assert.strictEqual(stored.value.hash, ApiKeys.hash(Redacted.value(key)))
          assert.notStrictEqual(stored.value.hash, Redacted.value(key))
        }
        assert.deepStrictEqual(yield* keys.authenticate(key), Option.some({ workspaceId: acme, apiKeyId: record.id }))
        assert.isTrue((yield* keys.list).some((listed) => listed.id === record.id && listed.revokedAt === null))
        assert.isTrue(yield* keys.revoke(record.id))
        assert.isTrue(Option.isNone(yield* keys.authenticate(key)))
        assert.isFalse(yield* keys.revoke("key_unknown"))
      })
    )

    it.effect("keeps keys of two workspaces apart", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys.ApiKeys
        const other = Schema.decodeSync(WorkspaceId)("other")
        const a = yield* keys.create(acme)
        const b = yield* keys.create(other)
        assert.deepStrictEqual(
          Option.map(yield* keys.authenticate(a.key), (p) => p.workspaceId),
          Option.some(acme)
        )
        assert.deepStrictEqual(
          Option.map(yield* keys.authenticate(b.key), (p) => p.workspaceId),
          Option.some(other)
        )
      })
    )
  }
)
