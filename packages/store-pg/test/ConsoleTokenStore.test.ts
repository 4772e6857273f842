import { assert } from "@effect/vitest"
import * as ConsoleTokens from "@waybill/core/ConsoleTokens"
import { WorkspaceId } from "@waybill/core/Workspace"
import { Effect, Layer, Option, Redacted, Schema, TestClock } from "effect"
import * as ConsoleTokenStore from "../src/PgConsoleTokenStore.js"
import { forEachBackend } from "./harness.js"

const acme = Schema.decodeSync(WorkspaceId)("acme")
const other = Schema.decodeSync(WorkspaceId)("other")
const hour = { ttlSeconds: 3600, scope: "read", label: "Ada" } as const

forEachBackend(
  "ConsoleTokenStore",
  (database) => ConsoleTokens.layer.pipe(Layer.provideMerge(ConsoleTokenStore.layer), Layer.provideMerge(database)),
  (it) => {
    it.effect("stores only the hash, authenticates until expiry, lists live tokens without values", () =>
      Effect.gen(function* () {
        const tokens = yield* ConsoleTokens.ConsoleTokens
        const store = yield* ConsoleTokens.ConsoleTokenStore
        yield* TestClock.setTime(1_000_000_000_000)
        const { token, record } = yield* tokens.mint(acme, hour)
        assert.match(Redacted.value(token), /^wbc_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/)
        assert.match(record.id, /^cst_/)
        assert.strictEqual(record.expiresAt, 1_000_000_000 + 3600)
        const stored = yield* store.find(record.id)
        assert.isTrue(Option.isSome(stored))
        if (Option.isSome(stored)) {
          assert.strictEqual(stored.value.hash, ConsoleTokens.hash(Redacted.value(token)))
          assert.deepStrictEqual({ ...stored.value, hash: undefined }, { ...record, hash: undefined })
        }
        assert.deepStrictEqual(
          yield* tokens.authenticate(token),
          Option.some({
            workspaceId: acme,
            tokenId: record.id,
            scope: "read",
            label: "Ada",
            expiresAt: record.expiresAt
          })
        )
        const listed = yield* tokens.list(acme)
        assert.deepStrictEqual(
          listed.map((t) => t.id),
          [record.id]
        )
        assert.notInclude(JSON.stringify(listed), Redacted.value(token))
        assert.deepStrictEqual(yield* tokens.list(other), [])
        // A token with the right id but another secret is refused.
        const forged = Redacted.make(`${Redacted.value(token).slice(0, 31)}${"A".repeat(43)}`)
        assert.isTrue(Option.isNone(yield* tokens.authenticate(forged)))
        yield* TestClock.adjust("3599 seconds")
        assert.isTrue(Option.isSome(yield* tokens.authenticate(token)))
        yield* TestClock.adjust("1 second")
        assert.isTrue(Option.isNone(yield* tokens.authenticate(token)))
        assert.deepStrictEqual(yield* tokens.list(acme), [])
        assert.isFalse(yield* tokens.revoke(acme, record.id))
      })
    )

    it.effect("revokes at once, only in the token's workspace", () =>
      Effect.gen(function* () {
        const tokens = yield* ConsoleTokens.ConsoleTokens
        const { token, record } = yield* tokens.mint(acme, { ttlSeconds: 60, scope: "manage", label: null })
        assert.isFalse(yield* tokens.revoke(other, record.id))
        assert.isTrue(Option.isSome(yield* tokens.authenticate(token)))
        assert.isTrue(yield* tokens.revoke(acme, record.id))
        assert.isTrue(Option.isNone(yield* tokens.authenticate(token)))
        assert.isFalse(yield* tokens.revoke(acme, record.id))
        assert.isFalse(yield* tokens.revoke(acme, "cst_unknown"))
      })
    )
  }
)
