import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted, Schema, TestClock } from "effect"
import * as fc from "fast-check"
import * as ApiKeys from "../src/ApiKeys.js"
import * as Cursor from "../src/Cursor.js"
import * as Id from "../src/Id.js"
import * as Issue from "../src/Issue.js"
import { makeDigestCache } from "../src/internal/digestCache.js"
import * as JsonDepth from "../src/JsonDepth.js"
import * as JsonText from "../src/JsonText.js"
import * as Transactor from "../src/Transactor.js"
import * as ValidationError from "../src/ValidationError.js"
import { WorkspaceId } from "../src/Workspace.js"

describe("Id", () => {
  it("formats a prefix, a sortable time part and 80 random bits", () => {
    const id = Id.format("drf", 1_798_000_000_000, new Uint8Array(10).fill(255))
    assert.strictEqual(id.length, 30)
    assert.isTrue(id.startsWith("drf_"))
    assert.isTrue(id.endsWith("zzzzzzzzzzzzzzzz"))
    assert.isTrue(Id.isId("drf", id))
    assert.isFalse(Id.isId("evt", id))
  })

  it("sorts by creation time", () => {
    const a = Id.format("evt", 1_000, new Uint8Array(10).fill(255))
    const b = Id.format("evt", 1_001, new Uint8Array(10))
    assert.isTrue(a < b)
  })

  it.effect("uses the Clock", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_798_000_000_000)
      const a = yield* Id.make("dlv")
      const b = yield* Id.make("dlv")
      assert.strictEqual(a.slice(0, 14), Id.format("dlv", 1_798_000_000_000, new Uint8Array(10)).slice(0, 14))
      assert.notStrictEqual(a, b)
    })
  )

  it("reads the time an id was made, also of a derived id", () => {
    const event = Id.format("evt", 1_798_000_000_123, new Uint8Array(10).fill(7))
    assert.deepStrictEqual(Id.timeOf(event), Option.some(1_798_000_000_123))
    assert.deepStrictEqual(Id.timeOf(Id.derive("dlv", event, Id.deriveKey("whk_1"))), Option.some(1_798_000_000_123))
    assert.deepStrictEqual(Id.timeOf("not-an-id"), Option.none())
    assert.deepStrictEqual(Id.timeOf("evt_short"), Option.none())
  })
})

describe("Id.derive", () => {
  const event = Id.format("evt", 1_798_000_000_000, new Uint8Array(10).fill(3))
  const other = Id.format("evt", 1_798_000_000_000, new Uint8Array(10).fill(4))
  const key1 = Id.deriveKey("whk_1")
  const key2 = Id.deriveKey("whk_2")

  it("keeps the source id's time, and gives the same id for the same inputs only", () => {
    const a = Id.derive("dlv", event, key1)
    assert.isTrue(Id.isId("dlv", a))
    assert.strictEqual(a.slice(4, 14), event.slice(4, 14))
    assert.strictEqual(Id.derive("dlv", event, Id.deriveKey("whk_1")), a)
    assert.notStrictEqual(Id.derive("dlv", event, key2), a)
    assert.notStrictEqual(Id.derive("dlv", other, key1), a)
  })

  it("is the source's tail XOR the key, bit for bit", () => {
    const zero = new Uint8Array(10)
    assert.strictEqual(Id.derive("evt", event, zero), event)
    assert.strictEqual(
      Id.derive("dlv", event, new Uint8Array(10).fill(3 ^ 5)).slice(14),
      Id.format("dlv", 0, new Uint8Array(10).fill(5)).slice(14)
    )
  })

  it("falls back to epoch 0 and a hashed tail when the source is not an id", () => {
    const id = Id.derive("dlv", "not-an-id", key1)
    assert.isTrue(Id.isId("dlv", id))
    assert.strictEqual(id.slice(4, 14), "0000000000")
    assert.notStrictEqual(Id.derive("dlv", "another", key1), id)
  })

  // Derived ids are stored: a redo after an upgrade must derive the same id. The functions as they
  // were first written (strings built character by character) are the reference.
  const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
  const TAIL = /^[0-9a-hjkmnp-tv-z]{26}$/
  const formatAsFirst = (prefix: Id.Prefix, epochMillis: number, random: Uint8Array) => {
    let time = ""
    let rest = Math.max(0, Math.floor(epochMillis))
    for (let i = 0; i < 10; i++) {
      time = ALPHABET[rest % 32] + time
      rest = Math.floor(rest / 32)
    }
    let tail = ""
    for (let i = 0; i < 16; i++) {
      const bit = i * 5
      const word = ((random[bit >> 3] ?? 0) << 8) | (random[(bit >> 3) + 1] ?? 0)
      tail += ALPHABET[(word >> (11 - (bit & 7))) & 31]
    }
    return `${prefix}_${time}${tail}`
  }
  const deriveAsFirst = (prefix: Id.Prefix, from: string, key: Uint8Array) => {
    const separator = from.indexOf("_")
    const tail = from.slice(separator + 1)
    const bytes = new Uint8Array(10)
    const fromId = separator > 0 && TAIL.test(tail)
    if (fromId) {
      let acc = 0
      let bits = 0
      let j = 0
      for (let i = 10; i < 26; i++) {
        acc = ((acc << 5) | ALPHABET.indexOf(tail[i]!)) & 0xfff
        bits += 5
        if (bits >= 8) {
          bits -= 8
          bytes[j++] = (acc >> bits) & 255
        }
      }
    } else bytes.set(Id.deriveKey(from))
    for (let i = 0; i < 10; i++) bytes[i]! ^= key[i] ?? 0
    const id = formatAsFirst(prefix, 0, bytes)
    return fromId ? `${prefix}_${tail.slice(0, 10)}${id.slice(prefix.length + 11)}` : id
  }
  const prefix = fc.constantFrom<Id.Prefix>("evt", "dlv", "tour", "alr")
  const bytes = fc.uint8Array({ minLength: 10, maxLength: 10 })
  const millis = fc.oneof(fc.integer({ min: 0, max: 2 ** 50 - 1 }), fc.double({ min: -1e6, max: 2 ** 50, noNaN: true }))
  // Ids, ids one character off, longer or shorter, and any text with or without an underscore.
  const source = fc.oneof(
    fc.tuple(prefix, millis, bytes).map(([p, m, b]) => formatAsFirst(p, m, b)),
    fc
      .tuple(prefix, millis, bytes, fc.constantFrom("0", "z", "_"), fc.boolean())
      .map(([p, m, b, char, longer]) => (longer ? formatAsFirst(p, m, b) + char : formatAsFirst(p, m, b).slice(0, -1))),
    fc
      .tuple(prefix, millis, bytes, fc.nat(29), fc.constantFrom("i", "l", "o", "u", "A", "_", "é", ""))
      .map(([p, m, b, at, char]) => {
        const id = formatAsFirst(p, m, b)
        return id.slice(0, at) + char + id.slice(at + 1)
      }),
    fc.string(),
    fc.tuple(fc.string(), fc.string()).map(([a, b]) => `${a}_${b}`)
  )

  it("formats, derives and reads ids exactly as the functions first written did", () => {
    fc.assert(
      fc.property(prefix, millis, bytes, (p, m, b) => Id.format(p, m, b) === formatAsFirst(p, m, b)),
      { numRuns: 2_000 }
    )
    fc.assert(
      fc.property(prefix, source, bytes, (p, from, key) => {
        assert.strictEqual(Id.derive(p, from, key), deriveAsFirst(p, from, key))
        const tail = from.slice(from.indexOf("_") + 1)
        const isSome = from.indexOf("_") > 0 && TAIL.test(tail)
        assert.strictEqual(Option.isSome(Id.timeOf(from)), isSome)
        assert.strictEqual(Id.isId(p, from), from.startsWith(`${p}_`) && TAIL.test(from.slice(p.length + 1)))
      }),
      { numRuns: 5_000 }
    )
  })
})

describe("Issue", () => {
  it("lists every problem of a parse error with dotted paths", () => {
    const schema = Schema.Struct({ a: Schema.String, b: Schema.Array(Schema.Struct({ c: Schema.Number })) })
    const result = Schema.decodeUnknownEither(schema)({ a: 1, b: [{ c: 1 }, { c: "x" }] }, { errors: "all" })
    assert.isTrue(result._tag === "Left")
    if (result._tag === "Left") {
      const issues = Issue.fromParseError(result.left, "body")
      assert.deepStrictEqual(
        issues.map((i) => i.path),
        ["body.a", "body.b.1.c"]
      )
    }
  })

  it("says what an optional field expects, without the union's 'Expected undefined'", () => {
    const schema = Schema.Struct({
      status: Schema.optional(
        Schema.String.pipe(Schema.filter((s) => s === "draft", { message: () => "must be one of the statuses" }))
      ),
      limit: Schema.optional(Schema.Number)
    })
    const result = Schema.decodeUnknownEither(schema)({ status: "nope", limit: "x" }, { errors: "all" })
    assert.isTrue(result._tag === "Left")
    if (result._tag === "Left") {
      const issues = Issue.fromParseError(result.left)
      assert.deepStrictEqual(
        issues.map((i) => i.path),
        ["status", "limit"]
      )
      assert.strictEqual(issues[0]!.message, "must be one of the statuses")
      assert.notMatch(issues[1]!.message, /Expected undefined/)
    }
  })

  it("prefixes nested issues", () => {
    assert.deepStrictEqual(Issue.prefix([Issue.make("x", "m"), Issue.make("", "n")], "filters"), [
      { path: "filters.x", message: "m" },
      { path: "filters", message: "n" }
    ])
  })

  it("summarises issues in the error message", () => {
    const one = ValidationError.fromIssues([Issue.make("url", "must use https")])
    assert.strictEqual(one.message, "The request is invalid: url: must use https")
    const two = ValidationError.fromIssues([Issue.make("a", "x"), Issue.make("b", "y")], "filter")
    assert.strictEqual(two.message, "The filter is invalid: 2 problems found")
  })
})

describe("ApiKeys", () => {
  const workspace = Schema.decodeSync(WorkspaceId)("acme")
  const run = <A, E>(effect: Effect.Effect<A, E, ApiKeys.ApiKeys>) =>
    effect.pipe(
      Effect.provide(
        ApiKeys.layer([
          { workspaceId: Schema.decodeSync(WorkspaceId)("env-ws"), key: Redacted.make("static-key") }
        ]).pipe(Layer.provide(ApiKeys.layerStoreMemory))
      )
    )

  it.effect("issues a key that authenticates to its workspace, and never stores it in clear", () =>
    run(
      Effect.gen(function* () {
        const keys = yield* ApiKeys.ApiKeys
        const { key, record } = yield* keys.create(workspace)
        assert.isTrue(Option.isSome(ApiKeys.issuedKeyId(Redacted.value(key))))
        const principal = yield* keys.authenticate(key)
        assert.deepStrictEqual(principal, Option.some({ workspaceId: workspace, apiKeyId: record.id }))
        const listed = yield* keys.list
        assert.strictEqual(listed.length, 1)
        assert.isFalse(JSON.stringify(listed).includes(Redacted.value(key)))
      })
    )
  )

  it.effect("refuses empty, unknown, tampered and revoked keys", () =>
    run(
      Effect.gen(function* () {
        const keys = yield* ApiKeys.ApiKeys
        const { key, record } = yield* keys.create(workspace)
        const raw = Redacted.value(key)
        const tampered = raw.slice(0, -1) + (raw.endsWith("A") ? "B" : "A")
        for (const candidate of ["", "nope", tampered]) {
          assert.isTrue(Option.isNone(yield* keys.authenticate(Redacted.make(candidate))))
        }
        // Accepted first, so that its digest is cached: the revocation must hold all the same.
        assert.isTrue(Option.isSome(yield* keys.authenticate(key)))
        assert.isTrue(yield* keys.revoke(record.id))
        assert.isFalse(yield* keys.revoke(record.id))
        assert.isTrue(Option.isNone(yield* keys.authenticate(key)))
      })
    )
  )

  it.effect("authenticates statically configured keys", () =>
    run(
      Effect.gen(function* () {
        const keys = yield* ApiKeys.ApiKeys
        const principal = yield* keys.authenticate(Redacted.make("static-key"))
        assert.deepStrictEqual(
          Option.map(principal, (p) => p.workspaceId),
          Option.some("env-ws")
        )
        assert.isTrue(Option.isNone(yield* keys.authenticate(Redacted.make("static-key "))))
      })
    )
  )
})

describe("JsonText", () => {
  const NUL = "contains a NUL character (\\u0000), which cannot be stored"
  const SURROGATE = "contains an unpaired surrogate (such as \\ud800 alone), which is not Unicode text"

  it("finds NULs and unpaired surrogates, not surrogate pairs", () => {
    assert.strictEqual(JsonText.problemOf("a\u0000b"), NUL)
    for (const lone of ["\ud800", "a\ud800b", "\udc00", "\udc00\ud800", "\ud83d\ude00\ude00"]) {
      assert.strictEqual(JsonText.problemOf(lone), SURROGATE, JSON.stringify(lone))
    }
    for (const fine of ["", "plain", "tour \ud83d\ude00", "é ü ß 東京", "\u0001\t\n"]) {
      assert.isUndefined(JsonText.problemOf(fine), fine)
    }
  })

  it("reports each one at its path in document order, keys at their object's path, at most maxIssues", () => {
    const value = JSON.parse('{"b":[1,{"c":"\\ud800"}],"a":"x\\u0000","d":{"k\\u0000":true},"ok":"\\ud83d\\ude00"}')
    assert.deepStrictEqual(JsonText.textIssues(value, "body"), [
      Issue.make("body.b.1.c", SURROGATE),
      Issue.make("body.a", NUL),
      Issue.make("body.d", `has a key that ${NUL}`)
    ])
    assert.deepStrictEqual(JsonText.textIssues("\u0000", "name"), [Issue.make("name", NUL)])
    assert.deepStrictEqual(JsonText.textIssues({ fine: ["text", 1, null, true] }), [])
    assert.strictEqual(JsonText.textIssues(Array(1000).fill("\u0000")).length, JsonText.maxIssues)
  })

  it("stops at the nesting limit, so no value is walked without end", () => {
    let deep: unknown = "\u0000"
    for (let level = 0; level < 100_000; level++) deep = { x: deep }
    assert.deepStrictEqual(JsonText.textIssues(deep), [])
  })

  it("tells from the JSON text alone when there is nothing to look for", () => {
    assert.isFalse(JsonText.mayHoldTextIssues('{"name":"plain \\u00e9 ü 😀","n":0}'))
    for (const text of ['"\\u0000"', '"\\uD800"', '"\\udc00"', '["\\ud83d\\ude00"]']) {
      assert.isTrue(JsonText.mayHoldTextIssues(text), text)
    }
  })
})

describe("digest cache", () => {
  const counting = () => {
    const hashed: Array<string> = []
    const digest = (key: string) => {
      hashed.push(key)
      return Buffer.from(key)
    }
    return { hashed, digest }
  }

  it("hashes a key once while it is held, and gives its digest back", () => {
    const { hashed, digest } = counting()
    const cache = makeDigestCache(digest, 4)
    for (let i = 0; i < 3; i++) assert.deepStrictEqual(cache.digest("a"), Buffer.from("a"))
    assert.deepStrictEqual(hashed, ["a"])
  })

  it("holds at most its capacity, letting the key presented longest ago go first", () => {
    const { hashed, digest } = counting()
    const cache = makeDigestCache(digest, 2)
    cache.digest("a")
    cache.digest("b")
    cache.digest("a") // a is now the most recent
    cache.digest("c") // makes room by letting b go
    assert.strictEqual(cache.size(), 2)
    cache.digest("a")
    cache.digest("c")
    assert.deepStrictEqual(hashed, ["a", "b", "c"])
    cache.digest("b")
    assert.deepStrictEqual(hashed, ["a", "b", "c", "b"])
    for (let i = 0; i < 100; i++) cache.digest(`random-${i}`)
    assert.strictEqual(cache.size(), 2)
  })
})

describe("Cursor", () => {
  it("round-trips ids of one kind and refuses any other cursor", () => {
    const id = Id.format("drf", 1_798_000_000_000, new Uint8Array(10).fill(7))
    const cursor = Cursor.afterId("drf", id)
    assert.match(cursor, /^[A-Za-z0-9_-]+$/)
    assert.deepStrictEqual(Cursor.idAfter("drf", cursor), Option.some(id))
    assert.isTrue(Option.isNone(Cursor.idAfter("whk", cursor)))
    for (const bad of ["", "not a cursor!", "x".repeat(201), Cursor.encode("drf:nope"), "a"]) {
      assert.isTrue(Option.isNone(Cursor.idAfter("drf", bad)), bad)
    }
    assert.deepStrictEqual(Cursor.decode(Cursor.encode("tour:1:tour_x")), Option.some("tour:1:tour_x"))
  })
})

describe("JsonDepth", () => {
  const nested = (levels: number, key = "a"): unknown => {
    let value: unknown = {}
    for (let i = 1; i < levels; i++) value = { [key]: value }
    return value
  }

  it("accepts 64 levels and scalars", () => {
    assert.isTrue(JsonDepth.isWithinDepth(nested(64)))
    assert.isTrue(JsonDepth.isWithinDepth("text"))
    assert.isTrue(JsonDepth.isWithinDepth(null))
  })

  it("reports the 65th level at its dotted path, under a prefix", () => {
    const issue = JsonDepth.depthIssue(nested(65), JsonDepth.maxDepth, "payload")
    assert.deepStrictEqual(
      issue,
      Option.some(
        Issue.make(["payload", ...Array(64).fill("a")].join("."), "nests deeper than 64 levels of objects and arrays")
      )
    )
  })

  it("counts arrays as levels and names indices", () => {
    let value: unknown = [1]
    for (let i = 1; i < 65; i++) value = [0, value]
    const issue = Option.getOrThrow(JsonDepth.depthIssue(value))
    assert.strictEqual(issue.path, Array(64).fill("1").join("."))
  })

  it("reports the first too-deep branch in document order", () => {
    const issue = Option.getOrThrow(JsonDepth.depthIssue({ x: nested(70, "b"), y: nested(70, "c") }))
    assert.isTrue(issue.path.startsWith("x.b"))
  })

  it("is safe at 100,000 levels and on a cyclic value", () => {
    assert.isFalse(JsonDepth.isWithinDepth(JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`)))
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    assert.isFalse(JsonDepth.isWithinDepth(cyclic))
  })
})

describe("Transactor.layerMemory", () => {
  it.effect("a nested transaction joins the open one; others wait their turn", () =>
    Effect.gen(function* () {
      const transactor = yield* Transactor.Transactor
      const order: Array<string> = []
      const nested = transactor.withTransaction(
        Effect.zipRight(
          Effect.sync(() => order.push("outer")),
          transactor.withTransaction(Effect.sync(() => order.push("inner")))
        )
      )
      const other = transactor.withTransaction(Effect.sync(() => order.push("other")))
      yield* Effect.all([nested, other], { concurrency: "unbounded" })
      assert.deepStrictEqual(order, ["outer", "inner", "other"])
    }).pipe(Effect.provide(Transactor.layerMemory))
  )
})
