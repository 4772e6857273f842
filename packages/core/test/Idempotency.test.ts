/**
 * Idempotent requests at the core (contract §8): the key rules, the body's fingerprint (the same
 * JSON value, whatever its spacing or key order), and `Idempotency.run` over the in-memory store:
 * one creation, replays of the kept answer, 422 for another body or operation, 409 while in
 * flight, nothing kept for a failure, keys per workspace, the sweep, and the transactional write.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Schema, TestClock } from "effect"
import * as fc from "fast-check"
import * as Idempotency from "../src/Idempotency.js"
import * as Transactor from "../src/Transactor.js"
import { ValidationError } from "../src/ValidationError.js"
import { WorkspaceId } from "../src/Workspace.js"

const wsA = Schema.decodeSync(WorkspaceId)("ws-a")
const wsB = Schema.decodeSync(WorkspaceId)("ws-b")

describe("Idempotency keys and fingerprints", () => {
  it("keys are 1 to 255 visible ASCII characters", () => {
    for (const good of ["a", "~!", "x".repeat(255), "550e8400-e29b-41d4-a716-446655440000", "a:b/c?d=e"]) {
      assert.deepStrictEqual(Idempotency.keyIssues(good), [], good)
    }
    for (const bad of ["", "x".repeat(256), "with space", "tab\there", "é", "nul\u0000", "\u007f", 42]) {
      const issues = Idempotency.keyIssues(bad)
      assert.deepStrictEqual(
        issues.map((issue) => issue.path),
        ["Idempotency-Key"],
        String(bad)
      )
    }
  })

  it("a fingerprint is the JSON value's: spacing and key order do not count, anything else does", () => {
    const parse = (text: string) => Idempotency.fingerprint(JSON.parse(text))
    assert.strictEqual(
      parse('{"a":1,"b":[1,{"c":2,"d":null}]}'),
      parse('{ "b" : [ 1 , { "d":null,"c": 2.0 } ], "a":1 }')
    )
    assert.notStrictEqual(parse('{"a":1}'), parse('{"a":"1"}'))
    assert.notStrictEqual(parse('{"a":[1,2]}'), parse('{"a":[2,1]}'))
    assert.notStrictEqual(parse('{"a":1}'), parse('{"a":1,"b":null}'))
    assert.notStrictEqual(parse('{"a\\u0000b":1}'), parse('{"a":1}'))
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value, null, 2)
        return Idempotency.fingerprint(JSON.parse(text)) === Idempotency.fingerprint(value)
      })
    )
  })
})

// A creation that counts how often it ran, writing its record through `writeInTransaction`.
const setup = Effect.gen(function* () {
  const store = Idempotency.makeMemory()
  const idempotency = Idempotency.make(store)
  const transactor = yield* Transactor.Transactor
  const created: Array<string> = []
  const request = (
    body: unknown,
    options: {
      readonly key?: string
      readonly workspaceId?: WorkspaceId
      readonly operation?: string
      readonly fail?: boolean
      readonly gate?: Deferred.Deferred<void>
    } = {}
  ) =>
    idempotency.run({
      workspaceId: options.workspaceId ?? wsA,
      key: options.key ?? "key-1",
      operation: options.operation ?? "POST /things",
      body,
      create: (pending) =>
        Effect.gen(function* () {
          if (options.gate !== undefined) yield* Deferred.await(options.gate)
          if (options.fail) return yield* Effect.fail(new ValidationError({ message: "no", issues: [] }))
          const id = `thing_${created.length + 1}`
          const answer = JSON.stringify({ id })
          const written = yield* Idempotency.writeInTransaction(
            transactor,
            store,
            pending.complete(201, answer),
            Effect.sync(() => created.push(id))
          )
          return written ? Idempotency.created(id, 201, answer) : Idempotency.taken
        }),
      replay: (record) => (JSON.parse(record.body) as { id: string }).id
    })
  return { store, request, created }
})

describe("Idempotency.run", () => {
  it.effect("creates once; the same body again is a replay of the same status and body", () =>
    Effect.gen(function* () {
      const { request, created } = yield* setup
      const first = yield* request({ a: 1, b: 2 })
      assert.deepStrictEqual(first, { value: "thing_1", replayed: false, status: 201, body: '{"id":"thing_1"}' })
      const again = yield* request({ b: 2, a: 1 })
      assert.deepStrictEqual(again, { ...first, replayed: true })
      assert.deepStrictEqual(created, ["thing_1"])
    }).pipe(Effect.provide(Transactor.layerMemory))
  )

  it.effect("another body or operation is IdempotencyKeyReused; other workspaces and keys are apart", () =>
    Effect.gen(function* () {
      const { request, created } = yield* setup
      yield* request({ a: 1 })
      assert.instanceOf(yield* Effect.flip(request({ a: 2 })), Idempotency.IdempotencyKeyReused)
      assert.instanceOf(
        yield* Effect.flip(request({ a: 1 }, { operation: "POST /other" })),
        Idempotency.IdempotencyKeyReused
      )
      assert.strictEqual((yield* request({ a: 1 }, { workspaceId: wsB })).replayed, false)
      assert.strictEqual((yield* request({ a: 1 }, { key: "key-2" })).replayed, false)
      assert.deepStrictEqual(created, ["thing_1", "thing_2", "thing_3"])
      // A refused body with a kept key is judged against the key, as any other body.
      assert.instanceOf(yield* Effect.flip(request({ a: 3 }, { fail: true })), Idempotency.IdempotencyKeyReused)
      assert.strictEqual((yield* request({ a: 1 }, { fail: true })).replayed, true)
    }).pipe(Effect.provide(Transactor.layerMemory))
  )

  it.effect("a failure keeps nothing: the same key may be used again", () =>
    Effect.gen(function* () {
      const { request, store, created } = yield* setup
      assert.instanceOf(yield* Effect.flip(request({ a: 1 }, { fail: true })), ValidationError)
      assert.isTrue(Option.isNone(yield* store.find(wsA, "key-1")))
      assert.strictEqual((yield* request({ a: 2 })).replayed, false)
      assert.deepStrictEqual(created, ["thing_1"])
    }).pipe(Effect.provide(Transactor.layerMemory))
  )

  it.effect("the same key while the first is in flight is IdempotencyKeyInFlight; then it replays", () =>
    Effect.gen(function* () {
      const { request, created } = yield* setup
      const gate = yield* Deferred.make<void>()
      const first = yield* Effect.fork(request({ a: 1 }, { gate }))
      yield* Effect.yieldNow()
      assert.instanceOf(yield* Effect.flip(request({ a: 1 })), Idempotency.IdempotencyKeyInFlight)
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual((yield* Fiber.join(first)).replayed, false)
      assert.strictEqual((yield* request({ a: 1 })).replayed, true)
      assert.deepStrictEqual(created, ["thing_1"])
    }).pipe(Effect.provide(Transactor.layerMemory))
  )

  it.effect("an invalid key is a ValidationError at Idempotency-Key, before anything runs", () =>
    Effect.gen(function* () {
      const { request, created } = yield* setup
      const error = yield* Effect.flip(request({ a: 1 }, { key: "no spaces allowed" }))
      assert.instanceOf(error, ValidationError)
      assert.deepStrictEqual(
        (error as ValidationError).issues.map((issue) => issue.path),
        ["Idempotency-Key"]
      )
      assert.deepStrictEqual(created, [])
    }).pipe(Effect.provide(Transactor.layerMemory))
  )

  it.effect("kept answers expire after 24 hours at the earliest and are swept in bounded steps", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_798_000_000_000)
      const { request, store } = yield* setup
      for (const key of ["k1", "k2", "k3"]) yield* request({}, { key })
      const now = 1_798_000_000 + Idempotency.retentionSeconds
      assert.strictEqual(yield* store.sweep(now - 1, 10), 0)
      assert.strictEqual(yield* store.sweep(now, 2), 2)
      assert.strictEqual(yield* store.sweep(now, 2), 1)
      assert.strictEqual((yield* request({}, { key: "k1" })).replayed, false)
    }).pipe(Effect.provide(Transactor.layerMemory))
  )

  it.effect("writeInTransaction answers false and writes nothing when the key is kept", () =>
    Effect.gen(function* () {
      const store = Idempotency.makeMemory()
      const transactor = yield* Transactor.Transactor
      const record: Idempotency.IdempotencyRecord = {
        workspaceId: wsA,
        key: "k",
        operation: "POST /x",
        fingerprint: "f",
        status: 201,
        body: "{}",
        createdAt: 0,
        expiresAt: 1
      }
      let writes = 0
      const write = Effect.sync(() => ++writes)
      assert.isTrue(yield* Idempotency.writeInTransaction(transactor, store, record, write))
      assert.isFalse(yield* Idempotency.writeInTransaction(transactor, store, record, write))
      assert.strictEqual(writes, 1)
    }).pipe(Effect.provide(Transactor.layerMemory))
  )
})
