import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as EventType from "../src/EventType.js"
import * as OpenApi from "../src/OpenApi.js"
import { fullPayload, specTable } from "./fixtures.js"
import { validate } from "./jsonSchema.js"

const section = OpenApi.openApiWebhooks()

// The OpenAPI 3.1 shapes a webhook entry uses (Path Item → Operation → Parameter/Request Body/Responses).
const Ref = Schema.Struct({ $ref: Schema.String.pipe(Schema.startsWith("#/components/")) })
const Parameter = Schema.Struct({
  name: Schema.String,
  in: Schema.Literal("header", "query", "path", "cookie"),
  required: Schema.Boolean,
  description: Schema.optional(Schema.String),
  schema: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
const Operation = Schema.Struct({
  operationId: Schema.String,
  summary: Schema.String,
  description: Schema.String,
  tags: Schema.Array(Schema.String),
  parameters: Schema.Array(Schema.Union(Ref, Parameter)),
  requestBody: Schema.Struct({
    required: Schema.Literal(true),
    content: Schema.Struct({ "application/json": Schema.Struct({ schema: Ref }) })
  }),
  security: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })),
  responses: Schema.Record({
    key: Schema.String.pipe(Schema.pattern(/^(default|[1-5](\d\d|XX))$/)),
    value: Schema.Struct({ description: Schema.String })
  })
})
const Webhooks = Schema.Record({ key: Schema.String, value: Schema.Struct({ post: Operation }) })
const Document = Schema.Struct({
  openapi: Schema.String.pipe(Schema.pattern(/^3\.1\.\d+$/)),
  info: Schema.Struct({ title: Schema.String, version: Schema.String }),
  webhooks: Webhooks,
  components: Schema.Struct({
    schemas: Schema.Record({ key: Schema.String.pipe(Schema.pattern(/^[a-zA-Z0-9.\-_]+$/)), value: Schema.Unknown }),
    parameters: Schema.Record({ key: Schema.String.pipe(Schema.pattern(/^[a-zA-Z0-9.\-_]+$/)), value: Parameter }),
    securitySchemes: Schema.Record({ key: Schema.String, value: Schema.Struct({ type: Schema.String }) })
  })
})

const document = OpenApi.addTo({ openapi: "3.1.0", info: { title: "Waybill", version: "0.1.0" }, paths: {} }, section)

const resolve = (ref: string): Record<string, unknown> => {
  const [, kind, name] = /^#\/components\/(schemas|parameters)\/(.+)$/.exec(ref) ?? []
  const table = kind === "parameters" ? section.components.parameters : section.components.schemas
  const target = name === undefined ? undefined : (table as Record<string, Record<string, unknown>>)[name]
  if (target === undefined) throw new Error(`unresolvable ${ref}`)
  return target
}

const refsIn = (value: unknown): Array<string> =>
  Array.isArray(value)
    ? value.flatMap(refsIn)
    : typeof value === "object" && value !== null
      ? Object.entries(value).flatMap(([key, inner]) => (key === "$ref" ? [inner as string] : refsIn(inner)))
      : []

const bodySchema = (type: EventType.EventType) =>
  (
    section.webhooks[type] as {
      post: { requestBody: { content: { "application/json": { schema: Record<string, unknown> } } } }
    }
  ).post.requestBody.content["application/json"].schema

describe("openApiWebhooks", () => {
  it("has one POST webhook per event type, all 60", () => {
    assert.deepStrictEqual(Object.keys(section.webhooks), [...EventType.all])
    assert.strictEqual(Object.keys(section.webhooks).length, 60)
  })

  it("is a well-formed OpenAPI 3.1 webhooks section once merged into a document", () => {
    const decoded = Schema.decodeUnknownEither(Document)(document, { errors: "all" })
    assert.isTrue(Either.isRight(decoded), Either.isLeft(decoded) ? String(decoded.left) : "")
    const operationIds = Object.values(section.webhooks).map(
      (item) => (item as { post: { operationId: string } }).post.operationId
    )
    assert.strictEqual(new Set(operationIds).size, 60)
  })

  it("resolves every $ref and leaves no $id behind", () => {
    const refs = refsIn(section)
    assert.isAbove(refs.length, 60)
    for (const ref of refs) assert.doesNotThrow(() => resolve(ref), ref)
    assert.notInclude(JSON.stringify(section), '"$id"')
  })

  it("sends the delivery headers: X-Delivery-Id, X-Event-Id, X-Event-Type, X-Delivery-Attempt, HMAC", () => {
    const post = (section.webhooks["tour-created"] as { post: { parameters: Array<Record<string, unknown>> } }).post
    const names = post.parameters.map((parameter) =>
      typeof parameter.$ref === "string" ? resolve(parameter.$ref).name : parameter.name
    )
    assert.sameMembers(names as Array<string>, [
      "X-Delivery-Id",
      "X-Event-Id",
      "X-Event-Type",
      "X-Delivery-Attempt",
      "X-Signature-Algorithm",
      "X-Signature-Timestamp",
      "X-Signature"
    ])
    const eventType = post.parameters.find((parameter) => parameter.name === "X-Event-Type")
    assert.deepStrictEqual(eventType?.schema, { type: "string", const: "tour-created" })
  })

  it("describes each request body as the envelope of exactly id, type, createdAt, payload", () => {
    for (const type of EventType.all) {
      const envelope = resolve(bodySchema(type).$ref as string)
      assert.deepStrictEqual(envelope.required, ["id", "type", "createdAt", "payload"], type)
      assert.strictEqual(envelope.additionalProperties, false, type)
      const properties = envelope.properties as Record<string, Record<string, unknown>>
      assert.deepStrictEqual(properties.type, { type: "string", enum: [type] }, type)
      assert.match(String(properties.payload!.$ref), /Payload$/, type)
    }
  })

  it("validates every full sample delivery and refuses one missing a required payload key", () => {
    for (const [type, keys] of specTable) {
      const schema = bodySchema(type as EventType.EventType)
      const payload = fullPayload(keys)
      const body = { id: "evt_1", type, createdAt: 1_798_000_000, payload }
      assert.deepStrictEqual(validate(schema, body, resolve), [], type)
      const required = Object.keys(keys).find((key) => !key.endsWith("?"))!
      const { [required]: _dropped, ...rest } = payload
      assert.include(validate(schema, { ...body, payload: rest }, resolve), `.payload.${required}: missing`, type)
      assert.isNotEmpty(validate(schema, { ...body, extra: 1 }, resolve), type)
      assert.isNotEmpty(validate(schema, { ...body, type: "tour-updated" }, resolve), type)
    }
  })

  it("carries the catalogue's cross-field rules into JSON Schema", () => {
    const schema = bodySchema("leg-created")
    const body = (loads: Array<unknown>) => ({
      id: "evt_1",
      type: "leg-created",
      createdAt: 1,
      payload: { leg: { id: "leg_1", loads } }
    })
    assert.isNotEmpty(validate(schema, body([{ id: "a", status: "Perished" }]), resolve))
    assert.isNotEmpty(
      validate(
        schema,
        body([{ id: "a", status: "Perished", writeOff: { reason: "Lost", writtenOffBy: "u", disposedAt: 1 } }]),
        resolve
      )
    )
    assert.isNotEmpty(
      validate(
        schema,
        body([{ id: "a", status: "Perished", writeOff: { reason: "Damaged", writtenOffBy: "u", disposedAt: 1 } }]),
        resolve
      )
    )
    const tourAction = bodySchema("tour-action-created")
    const [tour, action] = [fullPayload({ tour: "Tour" }).tour, fullPayload({ action: "TourAction" }).action]
    assert.isNotEmpty(
      validate(
        tourAction,
        { id: "evt_1", type: "tour-action-created", createdAt: 1, payload: { tour, action, oldStatus: "a" } },
        resolve
      )
    )
  })

  it("prefixes component names and refuses a clash with a different component", () => {
    assert.isTrue(Object.keys(section.components.schemas).every((name) => name.startsWith("Webhook")))
    assert.isDefined(section.components.schemas.WebhookTour)
    const custom = OpenApi.openApiWebhooks({ componentPrefix: "Evt" })
    assert.isDefined(custom.components.schemas.EvtTourCreatedEvent)
    assert.isTrue(refsIn(custom).every((ref) => /\/Evt[A-Z]/.test(ref)))
    assert.throws(() =>
      OpenApi.addTo({ openapi: "3.1.0", components: { schemas: { WebhookTour: { type: "string" } } } }, section)
    )
    const merged = OpenApi.addTo({ openapi: "3.1.0", components: { schemas: { Draft: { type: "object" } } } }, section)
    assert.isDefined((merged.components as { schemas: Record<string, unknown> }).schemas.Draft)
  })
})
