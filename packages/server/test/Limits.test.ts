/**
 * The reference server's limits from the environment: webhooks per workspace, the request
 * deadline and the connection cap, with their defaults, each refused by name when bad.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import * as Config from "../src/Config.js"

const read = (env: Record<string, string>) =>
  Config.settings.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either)

describe("limits from the environment", () => {
  it.effect("default to 100 webhooks per workspace, a 30 s deadline and 1,000 connections", () =>
    Effect.gen(function* () {
      const settings = yield* read({})
      assert.isTrue(Either.isRight(settings))
      if (Either.isLeft(settings)) return
      assert.deepStrictEqual(
        [settings.right.maxWebhooksPerWorkspace, settings.right.requestTimeoutMs, settings.right.maxConnections],
        [100, 30_000, 1_000]
      )
      const set = yield* read({
        WAYBILL_MAX_WEBHOOKS_PER_WORKSPACE: "7",
        WAYBILL_REQUEST_TIMEOUT_MS: "5000",
        WAYBILL_MAX_CONNECTIONS: "20"
      })
      assert.deepStrictEqual(
        Either.map(set, (s) => [s.maxWebhooksPerWorkspace, s.requestTimeoutMs, s.maxConnections]),
        Either.right([7, 5_000, 20])
      )
    })
  )

  it.effect("a bad value is refused with its variable's name", () =>
    Effect.gen(function* () {
      for (const name of [
        "WAYBILL_MAX_WEBHOOKS_PER_WORKSPACE",
        "WAYBILL_REQUEST_TIMEOUT_MS",
        "WAYBILL_MAX_CONNECTIONS"
      ]) {
        for (const value of ["0", "-3", "1.5", "many"]) {
          const settings = yield* read({ [name]: value })
          assert.isTrue(Either.isLeft(settings), `${name}=${value}`)
          if (Either.isRight(settings)) continue
          const lines = Config.describeError(settings.left)
          assert.strictEqual(lines.length, 1)
          assert.match(lines[0]!, new RegExp(`^${name}: `), `${name}=${value}`)
        }
      }
    })
  )
})

describe("WAYBILL_DISABLE_AFTER_FAILURES", () => {
  it.effect("defaults to 0 (never) and takes a non-negative integer", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(
        Either.map(yield* read({}), (s) => s.disableAfterFailures),
        Either.right(0)
      )
      for (const [value, expected] of [
        ["0", 0],
        ["5", 5]
      ] as const) {
        assert.deepStrictEqual(
          Either.map(yield* read({ WAYBILL_DISABLE_AFTER_FAILURES: value }), (s) => s.disableAfterFailures),
          Either.right(expected)
        )
      }
    })
  )

  it.effect("a bad value is refused with the variable's name", () =>
    Effect.gen(function* () {
      for (const value of ["-1", "1.5", "never"]) {
        const settings = yield* read({ WAYBILL_DISABLE_AFTER_FAILURES: value })
        assert.isTrue(Either.isLeft(settings), value)
        if (Either.isRight(settings)) continue
        const lines = Config.describeError(settings.left)
        assert.strictEqual(lines.length, 1)
        assert.match(lines[0]!, /^WAYBILL_DISABLE_AFTER_FAILURES: /, value)
      }
    })
  )
})

describe("WAYBILL_SHUTDOWN_GRACE_MS and WAYBILL_DELIVERY_LEASE_MS", () => {
  it.effect("default to 10 s of grace and the dispatcher's lease; take a grace of 0 and a lease of 3 s or more", () =>
    Effect.gen(function* () {
      const defaults = yield* read({})
      assert.deepStrictEqual(
        Either.map(defaults, (s) => [s.shutdownGraceMs, s.deliveryLeaseMs]),
        Either.right([10_000, undefined])
      )
      const set = yield* read({ WAYBILL_SHUTDOWN_GRACE_MS: "0", WAYBILL_DELIVERY_LEASE_MS: "3000" })
      assert.deepStrictEqual(
        Either.map(set, (s) => [s.shutdownGraceMs, s.deliveryLeaseMs]),
        Either.right([0, 3_000])
      )
    })
  )

  it.effect("a bad value is refused with the variable's name and what it takes", () =>
    Effect.gen(function* () {
      for (const [name, value, expected] of [
        ["WAYBILL_SHUTDOWN_GRACE_MS", "-1", /non-negative integer/],
        ["WAYBILL_SHUTDOWN_GRACE_MS", "soon", /WAYBILL_SHUTDOWN_GRACE_MS/],
        ["WAYBILL_DELIVERY_LEASE_MS", "2999", /at least 3000/],
        ["WAYBILL_DELIVERY_LEASE_MS", "0", /at least 3000/]
      ] as const) {
        const settings = yield* read({ [name]: value })
        assert.isTrue(Either.isLeft(settings), `${name}=${value}`)
        if (Either.isRight(settings)) continue
        const lines = Config.describeError(settings.left)
        assert.strictEqual(lines.length, 1)
        assert.match(lines[0]!, new RegExp(`^${name}: `), value)
        assert.match(lines[0]!, expected, value)
      }
    })
  )
})

describe("WAYBILL_RETENTION", () => {
  it.effect("defaults to 30 days; takes days, hours, minutes or 0; refuses the rest naming the variable", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(
        Either.map(yield* read({}), (s) => s.retentionMs),
        Either.right(30 * 86_400_000)
      )
      for (const [value, millis] of [
        ["2m", 120_000],
        ["12h", 43_200_000],
        ["0", 0]
      ] as const) {
        assert.deepStrictEqual(
          Either.map(yield* read({ WAYBILL_RETENTION: value }), (s) => s.retentionMs),
          Either.right(millis)
        )
      }
      for (const value of ["30", "1w", "-1d", "3651d"]) {
        const settings = yield* read({ WAYBILL_RETENTION: value })
        assert.isTrue(Either.isLeft(settings), value)
        if (Either.isRight(settings)) continue
        const lines = Config.describeError(settings.left)
        assert.strictEqual(lines.length, 1)
        assert.match(lines[0]!, /^WAYBILL_RETENTION: must be/, value)
      }
    })
  )
})
