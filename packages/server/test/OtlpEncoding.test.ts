/**
 * The OTLP bodies written as spans end are the ones the OpenTelemetry SDK's own serializers
 * write for the same spans: byte for byte in protobuf, value for value in JSON (ids, parents,
 * kinds, times, every kind of attribute value, events, links, status, flags, resource, scope).
 * If either encoding drifts from the SDK's (a new field, another order), this fails.
 */
import { assert, describe, it } from "@effect/vitest"
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer"
import { resourceFromAttributes } from "@opentelemetry/resources"
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base"
import * as TraceContext from "@waybill/core/TraceContext"
import { Duration, Effect, Fiber, Layer, TestClock } from "effect"
import * as Inspectable from "effect/Inspectable"
import type { EndedSpan } from "../src/internal/endedSpan.js"
import * as OtlpJson from "../src/internal/otlpJson.js"
import * as OtlpProtobuf from "../src/internal/otlpProtobuf.js"
import * as ProcessorTracer from "../src/internal/processorTracer.js"

const sender = {
  resource: { "service.name": "waybill-test", "telemetry.sdk.language": "nodejs", "host.cores": 2 },
  scope: { name: "waybill-test" }
}
const resource = resourceFromAttributes(sender.resource)

// What the tracer handed the SDK before (`ReadableSpan`), for the SDK's serializers: attribute
// values as `@effect/opentelemetry` passes them (a bigint or an object as text).
const attributeValue = (value: unknown) =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? value
    : typeof value === "bigint"
      ? value.toString()
      : Inspectable.toStringUnknown(value)
const hrTime = (nanos: bigint): [number, number] => [Number(nanos / 1_000_000_000n), Number(nanos % 1_000_000_000n)]
const kinds = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 } as const

const readable = (span: EndedSpan): ReadableSpan => {
  const attributes: Record<string, never> = {}
  span.attributes.forEach((value, key) => {
    attributes[key] = attributeValue(value) as never
  })
  return {
    name: span.name,
    kind: kinds[span.kind],
    spanContext: () => ({ traceId: span.traceId, spanId: span.spanId, traceFlags: 1 }),
    ...(span.parentSpanId === undefined
      ? {}
      : {
          parentSpanContext: {
            traceId: span.traceId,
            spanId: span.parentSpanId,
            traceFlags: 1,
            isRemote: span.parentRemote
          }
        }),
    startTime: hrTime(span.startUnixNanos),
    endTime: hrTime(span.endUnixNanos),
    duration: hrTime(span.endUnixNanos - span.startUnixNanos),
    status: { code: span.statusCode, ...(span.statusMessage === undefined ? {} : { message: span.statusMessage }) },
    attributes,
    links: span.links.map((link) => ({
      context: {
        traceId: link.span.traceId,
        spanId: link.span.spanId,
        traceFlags: 1,
        isRemote: link.span._tag === "ExternalSpan"
      },
      attributes: link.attributes as never
    })),
    events: span.events.map((event) => ({
      name: event.name,
      time: hrTime(event.unixNanos),
      ...(event.attributes === undefined ? {} : { attributes: event.attributes as never })
    })),
    ended: true,
    resource,
    instrumentationScope: sender.scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0
  }
}

const incoming = TraceContext.externalSpan({
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "00f067aa0ba902b7",
  sampled: true
})

// Spans of every shape the server makes, and some it does not (yet).
const spans = Effect.gen(function* () {
  const ended: Array<EndedSpan> = []
  const layer = Layer.setTracer(ProcessorTracer.make({ sink: { onEnd: (span) => ended.push(span) } }))
  yield* Effect.gen(function* () {
    yield* TestClock.adjust(Duration.seconds(1_764_000_000))
    const request = yield* Effect.fork(
      Effect.sleep(Duration.millis(1_234)).pipe(
        Effect.withSpan("webhook.attempt", {
          kind: "client",
          attributes: {
            "waybill.delivery.id": "dlv_01JDZ",
            "http.response.status_code": 200,
            "waybill.city": "Zürich ✓ 東京",
            "waybill.long": "x".repeat(300),
            "waybill.negative": -42,
            "waybill.large": 2 ** 60,
            "waybill.ratio": 0.25,
            "waybill.flag": true,
            "waybill.big": 7n,
            "waybill.object": { nested: [1, 2] }
          }
        }),
        Effect.withSpan("http.server POST", { kind: "server", parent: incoming })
      )
    )
    yield* TestClock.adjust(Duration.millis(1_234))
    yield* Fiber.join(request)
    yield* Effect.fail(new Error("receiver refused")).pipe(Effect.withSpan("failing"), Effect.flip)
    const waiting = yield* Effect.fork(Effect.never.pipe(Effect.withSpan("waiting", { kind: "consumer" })))
    yield* TestClock.adjust(Duration.millis(1))
    yield* Fiber.interrupt(waiting)
    yield* Effect.void.pipe(
      Effect.withSpan("linked", {
        kind: "producer",
        links: [{ _tag: "SpanLink", span: incoming, attributes: { why: "batch", count: 3 } }]
      })
    )
  }).pipe(Effect.provide(layer))
  return ended
})

const protobufOf = (ended: ReadonlyArray<EndedSpan>) => {
  const writer = new OtlpProtobuf.ProtoWriter(16)
  for (const span of ended) OtlpProtobuf.span(writer, span)
  return OtlpProtobuf.requests(sender)(writer)
}

describe("OTLP bodies written as spans end", () => {
  it.effect("protobuf: the SDK's serializer writes the same bytes for the same spans", () =>
    Effect.gen(function* () {
      const ended = yield* spans
      assert.deepStrictEqual(
        ended.map((span) => span.name),
        ["webhook.attempt", "http.server POST", "failing", "waiting", "linked"]
      )
      const ours = Buffer.from(protobufOf(ended))
      const sdk = Buffer.from(ProtobufTraceSerializer.serializeRequest(ended.map(readable))!)
      assert.strictEqual(ours.length, sdk.length)
      assert.isTrue(ours.equals(sdk), "the bodies differ")
    })
  )

  it.effect("protobuf: a batch larger than the writer's first buffer, and one span alone", () =>
    Effect.gen(function* () {
      const ended = yield* spans
      const many = Array.from({ length: 200 }, (_, i) => ended[i % ended.length]!)
      const sdk = Buffer.from(ProtobufTraceSerializer.serializeRequest(many.map(readable))!)
      assert.isTrue(Buffer.from(protobufOf(many)).equals(sdk))
      const one = Buffer.from(ProtobufTraceSerializer.serializeRequest([readable(ended[2]!)])!)
      assert.isTrue(Buffer.from(protobufOf([ended[2]!])).equals(one))
    })
  )

  it.effect("JSON: the SDK's serializer writes the same values (64-bit integers as text either way)", () =>
    Effect.gen(function* () {
      const ended = yield* spans
      const ours = JSON.parse(
        new TextDecoder().decode(OtlpJson.requests(sender)(ended.map((span) => OtlpJson.span(span))))
      )
      const sdk = JSON.parse(
        new TextDecoder().decode(JsonTraceSerializer.serializeRequest(ended.map(readable)) as Uint8Array)
      )
      // The SDK writes an int64 as a JSON number or text by its size; OTLP/JSON reads both.
      const normal = (value: unknown, key = ""): unknown =>
        Array.isArray(value)
          ? value.map((item) => normal(item))
          : typeof value === "object" && value !== null
            ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normal(v, k)]))
            : typeof value === "number" && (key === "intValue" || key.endsWith("UnixNano"))
              ? BigInt(value).toString()
              : value
      assert.deepStrictEqual(normal(ours), normal(sdk))
    })
  )
})
