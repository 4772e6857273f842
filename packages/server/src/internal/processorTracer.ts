/**
 * Effect's tracer writing ended spans straight to an OpenTelemetry span processor (the SDK's
 * batch processor and OTLP exporter). `@effect/opentelemetry`'s tracer makes each span through
 * the SDK's `Tracer`: an OpenTelemetry context per span, the SDK's span object with its clock
 * and limits, then a copy of every attribute into both; here a span is its ids, times and
 * attributes until it ends, and only a sampled one becomes a `ReadableSpan` (the SDK's public
 * export interface) for the processor. Cost against the SDK's path: docs/decisions.md, "Spans
 * straight to the span processor".
 */
import * as OtelApi from "@opentelemetry/api"
import type * as OtelResources from "@opentelemetry/resources"
import {
  type ReadableSpan,
  type Sampler,
  SamplingDecision,
  type SpanProcessor,
  type TimedEvent
} from "@opentelemetry/sdk-trace-base"
import * as TraceContext from "@waybill/core/TraceContext"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { UnrecordedSpan } from "./unrecordedSpan.js"

/**
 * Where ended spans go and how new ones are sampled. Without `sampler`, a span follows its
 * parent's decision and a root is recorded (the SDK's default, `parentbased_always_on`), decided
 * here without asking a sampler object.
 */
export interface Pipeline {
  readonly processor: SpanProcessor
  readonly resource: OtelResources.Resource
  readonly scope: ReadableSpan["instrumentationScope"]
  readonly sampler?: Sampler | undefined
  /**
   * Whether a span is made unrecorded (`UnrecordedSpan`, standing for its parent): the SQL
   * client's spans unless statements are traced, and background statements when they are.
   */
  readonly unrecorded?: ((name: string, parent: Option.Option<Tracer.AnySpan>) => boolean) | undefined
}

const kinds: Record<Tracer.SpanKind, OtelApi.SpanKind> = {
  internal: OtelApi.SpanKind.INTERNAL,
  server: OtelApi.SpanKind.SERVER,
  client: OtelApi.SpanKind.CLIENT,
  producer: OtelApi.SpanKind.PRODUCER,
  consumer: OtelApi.SpanKind.CONSUMER
}

const NANOS = 1_000_000_000n
const hrTime = (nanos: bigint): OtelApi.HrTime => {
  const seconds = nanos / NANOS
  return [Number(seconds), Number(nanos - seconds * NANOS)]
}

// `time` plus `nanos` (a span's length: far below 2^53).
const after = (time: OtelApi.HrTime, nanos: number): OtelApi.HrTime => {
  const sum = time[1] + nanos
  const carried = Math.floor(sum / 1e9)
  return [time[0] + carried, sum - carried * 1e9]
}

// As `@effect/opentelemetry` writes an attribute: primitives as they are, anything else as text.
const attributeValue = (value: unknown): OtelApi.AttributeValue =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? value
    : typeof value === "bigint"
      ? value.toString()
      : Inspectable.toStringUnknown(value)

const attributesOf = (record: Readonly<Record<string, unknown>>): OtelApi.Attributes => {
  const out: OtelApi.Attributes = {}
  for (const key in record) out[key] = attributeValue(record[key])
  return out
}

const spanContextOf = (span: Tracer.AnySpan, isRemote: boolean): OtelApi.SpanContext => ({
  traceId: span.traceId,
  spanId: span.spanId,
  traceFlags: span.sampled ? OtelApi.TraceFlags.SAMPLED : OtelApi.TraceFlags.NONE,
  isRemote
})

type Mutable<A> = { -readonly [K in keyof A]: A[K] }

const noLinks: ReadonlyArray<Tracer.SpanLink> = []

/** A span of Effect's that becomes a `ReadableSpan` for the processor when it ends sampled. */
class ProcessorSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly traceId: string
  readonly spanId: string
  readonly sampled: boolean
  readonly attributes = new Map<string, unknown>()
  links: ReadonlyArray<Tracer.SpanLink>
  status: Tracer.SpanStatus
  private events: Array<TimedEvent> | undefined
  // The parent in OpenTelemetry's terms: none when Effect's parent has no real ids (an unrecorded
  // root that stands for nothing), as the SDK treats an invalid parent context.
  private readonly above: Tracer.AnySpan | undefined
  constructor(
    private readonly pipeline: Pipeline,
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Tracer.Span["context"],
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    const above = Option.getOrUndefined(parent)
    this.above = above !== undefined && TraceContext.hasIds(above) ? above : undefined
    this.traceId = this.above?.traceId ?? TraceContext.traceId()
    this.spanId = TraceContext.spanId()
    this.links = links.length === 0 ? noLinks : links.slice()
    this.status = { _tag: "Started", startTime }
    this.sampled = this.decide(this.above)
  }

  private decide(above: Tracer.AnySpan | undefined): boolean {
    const { sampler } = this.pipeline
    if (sampler === undefined) return above === undefined ? true : above.sampled
    const context =
      above === undefined
        ? OtelApi.ROOT_CONTEXT
        : OtelApi.trace.setSpanContext(OtelApi.ROOT_CONTEXT, spanContextOf(above, above._tag === "ExternalSpan"))
    const result = sampler.shouldSample(context, this.traceId, this.name, kinds[this.kind], {}, [])
    if (result.attributes !== undefined)
      for (const key in result.attributes) this.attributes.set(key, result.attributes[key])
    return result.decision === SamplingDecision.RECORD_AND_SAMPLED
  }

  attribute(key: string, value: unknown): void {
    this.attributes.set(key, value)
  }

  event(name: string, startTime: bigint, attributes?: Record<string, unknown>): void {
    if (!this.sampled) return
    this.record({
      name,
      time: hrTime(startTime),
      ...(attributes === undefined ? {} : { attributes: attributesOf(attributes) })
    })
  }

  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    this.links = [...this.links, ...links]
  }

  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    const startTime = this.status.startTime
    this.status = { _tag: "Ended", startTime, endTime, exit }
    if (!this.sampled) return
    const attributes: OtelApi.Attributes = {}
    this.attributes.forEach((value, key) => {
      attributes[key] = attributeValue(value)
    })
    const spanContext = spanContextOf(this, false)
    const parent = this.above
    // One division for the start; the end and the duration from the span's length in nanoseconds.
    const start = hrTime(startTime)
    const length = Number(endTime - startTime)
    const end = after(start, length)
    const status = statusOf(exit, attributes, end, this)
    const readable: Mutable<ReadableSpan> = {
      name: this.name,
      kind: kinds[this.kind],
      spanContext: () => spanContext,
      startTime: start,
      endTime: end,
      status,
      attributes,
      links:
        this.links.length === 0
          ? []
          : this.links.map((link) => ({
              context: spanContextOf(link.span, link.span._tag === "ExternalSpan"),
              attributes: attributesOf(link.attributes)
            })),
      events: this.events ?? [],
      duration: after([0, 0], length),
      ended: true,
      resource: this.pipeline.resource,
      instrumentationScope: this.pipeline.scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0
    }
    if (parent !== undefined) readable.parentSpanContext = spanContextOf(parent, parent._tag === "ExternalSpan")
    this.pipeline.processor.onEnd(readable)
  }

  /** Records an event of the span's own (the `exception` of a failure). */
  record(event: TimedEvent): void {
    if (this.events === undefined) this.events = [event]
    else this.events.push(event)
  }
}

// As `@effect/opentelemetry` ends a span: OK, OK and marked when interrupted, or ERROR with the
// first error recorded as an `exception` event.
const statusOf = (
  exit: Exit.Exit<unknown, unknown>,
  attributes: OtelApi.Attributes,
  end: OtelApi.HrTime,
  span: ProcessorSpan
): OtelApi.SpanStatus => {
  if (exit._tag === "Success") return { code: OtelApi.SpanStatusCode.OK }
  if (Cause.isInterruptedOnly(exit.cause)) {
    attributes["span.label"] = "⚠︎ Interrupted"
    attributes["status.interrupted"] = true
    return { code: OtelApi.SpanStatusCode.OK, message: Cause.pretty(exit.cause) }
  }
  const first = Cause.prettyErrors(exit.cause)[0]
  if (first === undefined) return { code: OtelApi.SpanStatusCode.OK }
  span.record({
    name: "exception",
    time: end,
    attributes: {
      "exception.type": first.name,
      "exception.message": first.message,
      "exception.stacktrace": Cause.pretty(exit.cause, { renderErrorCause: true })
    }
  })
  return { code: OtelApi.SpanStatusCode.ERROR, message: first.message }
}

// The runtime calls a tracer's `context` around every step of every fiber. Nothing here needs a
// hook, and the default tracer's own function (the one every fiber calls without tracing) keeps
// that call as cheap as it is then: the runtime's call site keeps seeing one function.
const defaultContext = Effect.runSync(Effect.tracer).context

/** Effect's tracer over `pipeline`; the fiber's span is not made OpenTelemetry's active context. */
export const make = (pipeline: Pipeline): Tracer.Tracer => {
  const { unrecorded } = pipeline
  return Tracer.make({
    span: (name, parent, context, links, startTime, kind) =>
      unrecorded?.(name, parent) === true
        ? new UnrecordedSpan(name, parent, startTime, kind)
        : new ProcessorSpan(pipeline, name, parent, context, links, startTime, kind),
    context: defaultContext
  })
}
