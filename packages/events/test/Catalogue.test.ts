import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as EventType from "../src/EventType.js"
import * as Payload from "../src/Payload.js"
import { fullPayload, sampleOf, specTable } from "./fixtures.js"

const structOf = (ast: AST.AST): AST.TypeLiteral => {
  if (AST.isTypeLiteral(ast)) return ast
  if (AST.isRefinement(ast)) return structOf(ast.from)
  throw new Error(`not a struct: ${ast._tag}`)
}

const keysOf = (type: EventType.EventType): Record<string, string> =>
  Object.fromEntries(
    structOf(Payload.schemas[type].ast).propertySignatures.map((property) => [
      `${String(property.name)}${property.isOptional ? "?" : ""}`,
      AST.isTupleType(property.type) ? "list" : "single"
    ])
  )

const expectedKeys = (keys: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(keys).map(([key, entity]) => [key, entity.endsWith("[]") ? "list" : "single"]))

const issuesOf = <A>(result: Either.Either<A, ReadonlyArray<{ path: string; message: string }>>) =>
  Either.isLeft(result) ? result.left : []

describe("the catalogue against the spec table", () => {
  it("has exactly the spec's 60 event types, in the spec's order", () => {
    const spec = specTable.map(([type]) => type)
    assert.strictEqual(spec.length, 60)
    assert.strictEqual(new Set(spec).size, 60)
    assert.deepStrictEqual([...EventType.all], spec)
    for (const type of spec) assert.isTrue(EventType.isEventType(type), `missing ${type}`)
    for (const type of EventType.all) assert.include(spec, type, `extra ${type}`)
    assert.deepStrictEqual(Object.keys(Payload.schemas).sort(), [...spec].sort())
    assert.isFalse(EventType.isEventType("tour-updated"))
    assert.isFalse(EventType.isEventType(42))
  })

  it("gives every event exactly the spec's payload keys, optionality and lists (both ways)", () => {
    for (const [type, keys] of specTable) {
      assert.deepStrictEqual(keysOf(type as EventType.EventType), expectedKeys(keys), type)
    }
  })

  it("accepts a full payload of every event, keeping fields the spec does not show", () => {
    for (const [type, keys] of specTable) {
      const input = fullPayload(keys)
      const result = Payload.decodePayload(type as EventType.EventType, input)
      assert.deepStrictEqual(issuesOf(result), [], type)
      assert.deepStrictEqual(Either.getOrThrow(result), input, type)
    }
  })

  it("accepts every payload without its optional keys", () => {
    for (const [type, keys] of specTable) {
      const required = Object.fromEntries(Object.entries(keys).filter(([key]) => !key.endsWith("?")))
      assert.isTrue(Either.isRight(Payload.decodePayload(type as EventType.EventType, fullPayload(required))), type)
    }
  })

  it("rejects a payload missing any required key, with an issue at that key", () => {
    for (const [type, keys] of specTable) {
      for (const key of Object.keys(keys).filter((key) => !key.endsWith("?"))) {
        const input = fullPayload(keys)
        delete input[key]
        const issues = issuesOf(Payload.decodePayload(type as EventType.EventType, input))
        assert.deepStrictEqual(issues, [{ path: key, message: "is missing" }], `${type} without ${key}`)
      }
    }
  })

  it("rejects an entity without its id, naming the dotted path", () => {
    for (const [type, keys] of specTable) {
      for (const [key, entity] of Object.entries(keys)) {
        if (entity.startsWith("String") || entity === "MailboxStatus") continue
        const name = key.replace(/\?$/, "")
        const input = fullPayload(keys)
        const value = sampleOf(entity) as Record<string, unknown> | Array<Record<string, unknown>>
        const target = Array.isArray(value) ? value[0]! : value
        delete target.id
        input[name] = value
        const path = Array.isArray(value) ? `${name}.0.id` : `${name}.id`
        assert.deepInclude(
          issuesOf(Payload.decodePayload(type as EventType.EventType, input)),
          { path, message: "is missing" },
          `${type} ${path}`
        )
      }
    }
  })

  it("reports every issue at once, not only the first", () => {
    const issues = issuesOf(
      Payload.decodePayload("tour-action-created", {
        tour: { status: 3 },
        action: { id: "act_1", payload: {}, createdAt: "yesterday", createdAtMilliseconds: 1 },
        oldStatus: 1,
        newStatus: "planned",
        surplus: true
      })
    )
    assert.deepStrictEqual(issues.map((issue) => issue.path).sort(), [
      "action.createdAt",
      "action.payload.type",
      "oldStatus",
      "surplus",
      "tour.id",
      "tour.status"
    ])
  })

  it("refuses unknown top-level keys and a payload that is not an object", () => {
    assert.deepStrictEqual(
      issuesOf(Payload.decodePayload("tour-deleted", { tourId: "tour_1", tour: {} })).map((issue) => issue.path),
      ["tour"]
    )
    assert.deepStrictEqual(
      issuesOf(Payload.decodePayload("tour-deleted", "tour_1")).map((issue) => issue.path),
      [""]
    )
    assert.isTrue(Either.isLeft(Payload.decodePayload("transport-drafts-deleted", { transportDraftIds: "drf_1" })))
  })

  it("types mailbox statuses as active or inactive", () => {
    const ok = { mailboxId: "mbx_1", newStatus: "inactive", oldStatus: "active" }
    assert.isTrue(Either.isRight(Payload.decodePayload("mailbox-status-changed", ok)))
    assert.deepStrictEqual(
      issuesOf(Payload.decodePayload("mailbox-status-changed", { ...ok, newStatus: "paused" })).map(
        (issue) => issue.path
      ),
      ["newStatus"]
    )
  })

  it("gives task events a referencedEntity of exactly string orn, type and id", () => {
    const payload = { task: sampleOf("Task"), referencedEntity: sampleOf("ReferencedEntity") }
    assert.isTrue(Either.isRight(Payload.decodePayload("task-created", payload)))
    const embedded = { ...payload, referencedEntity: { orn: "o", type: "tour", id: "t", tour: { id: "t" } } }
    assert.deepStrictEqual(
      issuesOf(Payload.decodePayload("task-created", embedded)).map((issue) => issue.path),
      ["referencedEntity.tour"]
    )
    const numeric = { ...payload, referencedEntity: { orn: "o", type: "tour", id: 7 } }
    assert.deepStrictEqual(
      issuesOf(Payload.decodePayload("task-skipped", numeric)).map((issue) => issue.path),
      ["referencedEntity.id"]
    )
  })

  it("returns a valid payload as given: a __proto__ key stays data, never a prototype", () => {
    const input = JSON.parse('{"tour":{"id":"t","status":"s","__proto__":{"polluted":1}}}') as unknown
    const decoded = Either.getOrThrow(Payload.decodePayload("tour-created", input))
    assert.strictEqual(decoded, input)
    assert.isTrue(Object.hasOwn(decoded.tour, "__proto__"))
    assert.strictEqual(Object.getPrototypeOf(decoded.tour), Object.prototype)
    assert.include(JSON.stringify(decoded), "polluted")
  })

  it("payloadSchema returns the schema of the type", () => {
    assert.strictEqual(Payload.payloadSchema("leg-deleted"), Payload.schemas["leg-deleted"] as unknown)
  })
})

describe("a name the catalogue does not hold", () => {
  it("gets the closest catalogue names: a few letters off, another case, _ for -, or the names it begins", () => {
    const cases: ReadonlyArray<[string, ReadonlyArray<string>]> = [
      ["transport-draft-created", ["transport-drafts-created"]],
      ["tour-create", ["tour-created"]],
      ["Tour_Created", ["tour-created"]],
      ["task complete", ["task-completed"]],
      ["transport-draft-recurring-activate", ["transport-draft-recurring-activated"]],
      ["comment-reaction", ["comment-reaction-added", "comment-reaction-removed"]],
      ["zzz", []],
      ["", []],
      ["created-tour", []]
    ]
    for (const [value, expected] of cases) assert.deepStrictEqual(EventType.closestTypes(value), expected, value)
    assert.strictEqual(
      EventType.notInCatalogue("transport-draft-created"),
      "is not a catalogue event type; did you mean transport-drafts-created?"
    )
    assert.strictEqual(
      EventType.notInCatalogue("comment-reaction"),
      "is not a catalogue event type; did you mean comment-reaction-added or comment-reaction-removed?"
    )
    assert.strictEqual(EventType.notInCatalogue(42), "is not a catalogue event type")
  })

  it("decoding with the EventType schema says the same", () => {
    const result = Schema.decodeUnknownEither(EventType.EventType)("tour-create")
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) {
      assert.include(ParseResult.TreeFormatter.formatErrorSync(result.left), "did you mean tour-created?")
    }
  })
})
