/**
 * The tracer that hands Effect's spans to the exporter as they end: what reaches it (ids,
 * parents, times, attributes, status, the exception of a failure), what does not (unsampled
 * traces, background statements), the samplers `OTEL_TRACES_SAMPLER` names, and the settings
 * that choose them and the batches, refused by name when bad.
 */
import { assert, describe, it } from "@effect/vitest"
import { AlwaysOffSampler, ParentBasedSampler, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-base"
import * as TraceContext from "@waybill/core/TraceContext"
import { ConfigProvider, Duration, Effect, Either, Fiber, Layer, Option, TestClock } from "effect"
import * as Config from "../src/Config.js"
import type { EndedSpan } from "../src/internal/endedSpan.js"
import * as ProcessorTracer from "../src/internal/processorTracer.js"
import { UnrecordedSpan } from "../src/internal/unrecordedSpan.js"

const tracing = (options: Partial<ProcessorTracer.Pipeline> = {}) => {
  const ended: Array<EndedSpan> = []
  const layer = Layer.setTracer(ProcessorTracer.make({ sink: { onEnd: (span) => ended.push(span) }, ...options }))
  return { ended, layer }
}

const incoming = (sampled: boolean) =>
  TraceContext.externalSpan({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled })

describe("spans to a span processor", () => {
  it.effect("a child in a remote parent's trace: ids, parents, kind, attributes, times and status", () => {
    const { ended, layer } = tracing()
    return Effect.gen(function* () {
      const fiber = yield* Effect.fork(
        Effect.sleep(Duration.millis(5)).pipe(
          Effect.withSpan("webhook.attempt", {
            kind: "client",
            attributes: { "waybill.delivery.id": "dlv_1", "http.response.status_code": 200, "waybill.big": 7n }
          }),
          Effect.withSpan("http.server POST", { kind: "server", parent: incoming(true) })
        )
      )
      yield* TestClock.adjust(Duration.millis(1_500))
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(
        ended.map((span) => span.name),
        ["webhook.attempt", "http.server POST"]
      )
      const [attempt, request] = ended as [EndedSpan, EndedSpan]
      assert.strictEqual(request.traceId, "4bf92f3577b34da6a3ce929d0e0e4736")
      assert.strictEqual(request.parentSpanId, "00f067aa0ba902b7")
      assert.isTrue(request.parentRemote)
      assert.strictEqual(attempt.traceId, request.traceId)
      assert.strictEqual(attempt.parentSpanId, request.spanId)
      assert.isFalse(attempt.parentRemote)
      assert.match(attempt.spanId, /^[0-9a-f]{16}$/)
      assert.notStrictEqual(attempt.spanId, request.spanId)
      assert.strictEqual(attempt.kind, "client")
      assert.strictEqual(request.kind, "server")
      assert.deepStrictEqual(
        attempt.attributes,
        new Map<string, unknown>([
          ["waybill.delivery.id", "dlv_1"],
          ["http.response.status_code", 200],
          ["waybill.big", 7n]
        ])
      )
      assert.strictEqual(attempt.statusCode, 1) // OK
      assert.isUndefined(attempt.statusMessage)
      // The test clock stood at 0 and moved 5 ms for the attempt.
      assert.strictEqual(attempt.startUnixNanos, 0n)
      assert.strictEqual(attempt.endUnixNanos, 5_000_000n)
    }).pipe(Effect.provide(layer))
  })

  it.effect("times in nanoseconds: a span from 0.9 s lasting 1.2 s ends at 2.1 s", () => {
    const { ended, layer } = tracing()
    return Effect.gen(function* () {
      yield* TestClock.adjust(Duration.millis(900))
      const fiber = yield* Effect.fork(Effect.sleep(Duration.millis(1_200)).pipe(Effect.withSpan("long")))
      yield* TestClock.adjust(Duration.millis(1_200))
      yield* Fiber.join(fiber)
      assert.strictEqual(ended[0]!.startUnixNanos, 900_000_000n)
      assert.strictEqual(ended[0]!.endUnixNanos, 2_100_000_000n)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a root span starts a trace of its own; a failure ends it ERROR with the exception", () => {
    const { ended, layer } = tracing()
    return Effect.gen(function* () {
      const failed = yield* Effect.fail(new Error("receiver refused")).pipe(Effect.withSpan("failing"), Effect.flip)
      assert.strictEqual(failed.message, "receiver refused")
      const [span] = ended as [EndedSpan]
      assert.match(span.traceId, /^[0-9a-f]{32}$/)
      assert.isUndefined(span.parentSpanId)
      assert.strictEqual(span.statusCode, 2) // ERROR
      assert.strictEqual(span.statusMessage, "receiver refused")
      assert.strictEqual(span.events.length, 1)
      assert.strictEqual(span.events[0]!.name, "exception")
      assert.strictEqual(span.events[0]!.unixNanos, span.endUnixNanos)
      assert.strictEqual(span.events[0]!.attributes?.["exception.message"], "receiver refused")
      assert.include(String(span.events[0]!.attributes?.["exception.stacktrace"]), "receiver refused")
    }).pipe(Effect.provide(layer))
  })

  it.effect("an interrupted span ends OK, marked as interrupted", () => {
    const { ended, layer } = tracing()
    return Effect.gen(function* () {
      const fiber = yield* Effect.fork(Effect.never.pipe(Effect.withSpan("waiting")))
      yield* TestClock.adjust(Duration.millis(1))
      yield* Fiber.interrupt(fiber)
      const [span] = ended as [EndedSpan]
      assert.strictEqual(span.statusCode, 1)
      assert.strictEqual(span.attributes.get("status.interrupted"), true)
    }).pipe(Effect.provide(layer))
  })

  it.effect("an unsampled parent's trace reaches nothing, and its spans say so to their children", () => {
    const { ended, layer } = tracing()
    return Effect.gen(function* () {
      const sent = yield* TraceContext.current.pipe(
        Effect.withSpan("webhook.attempt"),
        Effect.withSpan("http.server POST", { parent: incoming(false) })
      )
      assert.deepStrictEqual(ended, [])
      assert.match(sent, /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-00$/)
    }).pipe(Effect.provide(layer))
  })

  it.effect("events and links of a sampled span are exported with it", () => {
    const { ended, layer } = tracing()
    return Effect.gen(function* () {
      yield* Effect.annotateCurrentSpan("waybill.deliveries", 2).pipe(
        Effect.zipRight(Effect.withSpan(Effect.void, "inner")),
        Effect.withSpan("outer", { links: [{ _tag: "SpanLink", span: incoming(true), attributes: { why: "batch" } }] })
      )
      const outer = ended.find((span) => span.name === "outer")!
      assert.strictEqual(outer.attributes.get("waybill.deliveries"), 2)
      assert.deepStrictEqual(
        outer.links.map((link) => [link.span.traceId, link.span.spanId, link.span._tag, link.attributes]),
        [["4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "ExternalSpan", { why: "batch" }]]
      )
    }).pipe(Effect.provide(layer))
  })

  it.effect("background statements (a name the pipeline leaves unrecorded, without a parent) are not exported", () => {
    const { ended, layer } = tracing({
      unrecorded: (name, parent) => name === "sql.execute" && Option.isNone(parent)
    })
    return Effect.gen(function* () {
      yield* Effect.withSpan(Effect.void, "sql.execute")
      yield* Effect.withSpan(Effect.void, "sql.execute").pipe(Effect.withSpan("http.server POST"))
      assert.deepStrictEqual(
        ended.map((span) => span.name),
        ["sql.execute", "http.server POST"]
      )
      assert.isDefined(ended[0]!.parentSpanId)
    }).pipe(Effect.provide(layer))
  })

  it.effect("inside an unrecorded statement: its parent's trace; inside an unrecorded root: a trace of its own", () => {
    const { ended, layer } = tracing()
    return Effect.gen(function* () {
      const standing = new UnrecordedSpan("sql.transaction", Option.some(incoming(true)), 0n, "client")
      yield* Effect.withSpan(Effect.void, "in a request's transaction", { parent: standing })
      const root = new UnrecordedSpan("sql.transaction", Option.none(), 0n, "client")
      yield* Effect.withSpan(Effect.void, "in a background transaction", { parent: root })
      const [inRequest, inBackground] = ended as [EndedSpan, EndedSpan]
      assert.strictEqual(inRequest.traceId, "4bf92f3577b34da6a3ce929d0e0e4736")
      assert.strictEqual(inRequest.parentSpanId, "00f067aa0ba902b7")
      assert.match(inBackground.traceId, /^[0-9a-f]{32}$/)
      assert.isUndefined(inBackground.parentSpanId)
    }).pipe(Effect.provide(layer))
  })
})

describe("samplers", () => {
  it.effect("a sampler decides each span: a ratio of 0 records no root; parent-based follows the parent", () => {
    const none = tracing({ sampler: new TraceIdRatioBasedSampler(0) })
    const parentBasedOff = tracing({ sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }) })
    return Effect.gen(function* () {
      yield* Effect.withSpan(Effect.void, "root").pipe(Effect.provide(none.layer))
      assert.deepStrictEqual(none.ended, [])
      yield* Effect.withSpan(Effect.void, "root").pipe(Effect.provide(parentBasedOff.layer))
      yield* Effect.withSpan(Effect.void, "child").pipe(
        Effect.withSpan("remote child", { parent: incoming(true) }),
        Effect.provide(parentBasedOff.layer)
      )
      assert.deepStrictEqual(
        parentBasedOff.ended.map((span) => span.name),
        ["child", "remote child"]
      )
    })
  })
})

const read = (env: Record<string, string>) =>
  Config.settings.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either)

const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }

describe("the sampler settings", () => {
  it.effect("OTEL_TRACES_SAMPLER and its ratio are read; unset, no sampler is named", () =>
    Effect.gen(function* () {
      const unset = yield* read(endpoint)
      assert.isTrue(Either.isRight(unset))
      if (Either.isRight(unset)) assert.isUndefined(unset.right.tracing?.sampler)
      const ratio = yield* read({
        ...endpoint,
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25"
      })
      assert.isTrue(Either.isRight(ratio))
      if (Either.isRight(ratio)) {
        assert.strictEqual(ratio.right.tracing?.sampler, "parentbased_traceidratio")
        assert.strictEqual(ratio.right.tracing?.samplerRatio, 0.25)
      }
    })
  )

  it.effect("a sampler outside the standard six, or a ratio outside 0 to 1, is refused by name", () =>
    Effect.gen(function* () {
      for (const [env, name] of [
        [{ OTEL_TRACES_SAMPLER: "jaeger_remote" }, "OTEL_TRACES_SAMPLER"],
        [{ OTEL_TRACES_SAMPLER_ARG: "1.5" }, "OTEL_TRACES_SAMPLER_ARG"],
        [{ OTEL_TRACES_SAMPLER_ARG: "half" }, "OTEL_TRACES_SAMPLER_ARG"]
      ] as const) {
        const settings = yield* read({ ...endpoint, ...env })
        assert.isTrue(Either.isLeft(settings), name)
        if (Either.isRight(settings)) continue
        const lines = Config.describeError(settings.left)
        assert.strictEqual(lines.length, 1)
        assert.match(lines[0]!, new RegExp(`^${name}: `), lines[0])
      }
    })
  )
})

describe("the batch settings", () => {
  it.effect("OTEL_BSP_* are read with the SDK's defaults; a bad one is refused by name", () =>
    Effect.gen(function* () {
      const defaults = yield* read(endpoint)
      assert.isTrue(Either.isRight(defaults))
      if (Either.isRight(defaults)) {
        assert.deepStrictEqual(defaults.right.tracing?.batch, {
          scheduledDelayMillis: 5_000,
          maxQueueSize: 2_048,
          maxExportBatchSize: 512
        })
      }
      const set = yield* read({ ...endpoint, OTEL_BSP_SCHEDULE_DELAY: "200", OTEL_BSP_MAX_QUEUE_SIZE: "64" })
      assert.isTrue(Either.isLeft(set), "a batch larger than the queue")
      if (Either.isLeft(set)) {
        assert.deepStrictEqual(Config.describeError(set.left), [
          "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: must not be larger than OTEL_BSP_MAX_QUEUE_SIZE"
        ])
      }
      for (const name of ["OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"]) {
        const settings = yield* read({ ...endpoint, [name]: "0" })
        assert.isTrue(Either.isLeft(settings), name)
        if (Either.isLeft(settings)) assert.match(Config.describeError(settings.left)[0]!, new RegExp(`^${name}: `))
      }
    })
  )
})
