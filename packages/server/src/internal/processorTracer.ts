/**
 * Effect's tracer writing each sampled span to a sink (`spanBatches.ts`) as it ends, without the
 * SDK's context and span objects. Cost against the SDK's path: docs/decisions/0092 and 0093.
 */
import * as OtelApi from "@opentelemetry/api"
import { type Sampler, SamplingDecision } from "@opentelemetry/sdk-trace-base"
import * as TraceContext from "@waybill/core/TraceContext"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import type { EndedSpan, SpanEvent, SpanSink, StatusCode } from "./endedSpan.js"
import { UnrecordedSpan } from "./unrecordedSpan.js"

/** Where ended spans go and how new ones are sampled; without `sampler`, `parentbased_always_on`. */
export interface Pipeline {
  readonly sink: SpanSink
  readonly sampler?: Sampler | undefined
  /** Whether a span is made unrecorded (`UnrecordedSpan`, standing for its parent). */
  readonly unrecorded?: ((name: string, parent: Option.Option<Tracer.AnySpan>) => boolean) | undefined
}

const kinds: Record<Tracer.SpanKind, OtelApi.SpanKind> = {
  internal: OtelApi.SpanKind.INTERNAL,
  server: OtelApi.SpanKind.SERVER,
  client: OtelApi.SpanKind.CLIENT,
  producer: OtelApi.SpanKind.PRODUCER,
  consumer: OtelApi.SpanKind.CONSUMER
}

const spanContextOf = (span: Tracer.AnySpan): OtelApi.SpanContext => ({
  traceId: span.traceId,
  spanId: span.spanId,
  traceFlags: span.sampled ? OtelApi.TraceFlags.SAMPLED : OtelApi.TraceFlags.NONE,
  isRemote: span._tag === "ExternalSpan"
})

const noLinks: ReadonlyArray<Tracer.SpanLink> = []
const noEvents: ReadonlyArray<SpanEvent> = []

/** A span of Effect's that the sink reads when it ends sampled. */
class ProcessorSpan implements Tracer.Span, EndedSpan {
  readonly _tag = "Span"
  readonly traceId: string
  readonly spanId: string
  readonly sampled: boolean
  readonly attributes = new Map<string, unknown>()
  links: ReadonlyArray<Tracer.SpanLink>
  status: Tracer.SpanStatus
  events: ReadonlyArray<SpanEvent> = noEvents
  readonly parentSpanId: string | undefined
  readonly parentRemote: boolean
  readonly startUnixNanos: bigint
  endUnixNanos = 0n
  statusCode: StatusCode = 0
  statusMessage: string | undefined = undefined
  constructor(
    private readonly pipeline: Pipeline,
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Tracer.Span["context"],
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    // None when Effect's parent has no real ids, as the SDK treats an invalid parent context.
    const above = Option.getOrUndefined(parent)
    const real = above !== undefined && (above instanceof ProcessorSpan || TraceContext.hasIds(above))
    this.traceId = real ? above.traceId : TraceContext.traceId()
    this.spanId = TraceContext.spanId()
    this.parentSpanId = real ? above.spanId : undefined
    this.parentRemote = real && above._tag === "ExternalSpan"
    this.links = links.length === 0 ? noLinks : links.slice()
    this.status = { _tag: "Started", startTime }
    this.startUnixNanos = startTime
    this.sampled = this.decide(real ? above : undefined)
  }

  private decide(above: Tracer.AnySpan | undefined): boolean {
    const { sampler } = this.pipeline
    if (sampler === undefined) return above === undefined ? true : above.sampled
    const context =
      above === undefined
        ? OtelApi.ROOT_CONTEXT
        : OtelApi.trace.setSpanContext(OtelApi.ROOT_CONTEXT, spanContextOf(above))
    const result = sampler.shouldSample(context, this.traceId, this.name, kinds[this.kind], {}, [])
    if (result.attributes !== undefined)
      for (const key in result.attributes) this.attributes.set(key, result.attributes[key])
    return result.decision === SamplingDecision.RECORD_AND_SAMPLED
  }

  attribute(key: string, value: unknown): void {
    this.attributes.set(key, value)
  }

  event(name: string, startTime: bigint, attributes?: Record<string, unknown>): void {
    if (this.sampled) this.record({ name, unixNanos: startTime, attributes })
  }

  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    this.links = [...this.links, ...links]
  }

  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", startTime: this.startUnixNanos, endTime, exit }
    if (!this.sampled) return
    this.endUnixNanos = endTime
    this.settle(exit)
    this.pipeline.sink.onEnd(this)
  }

  private record(event: SpanEvent): void {
    this.events = this.events === noEvents ? [event] : [...this.events, event]
  }

  // As `@effect/opentelemetry` ends a span: OK, OK and marked when interrupted, or ERROR with the
  // first error recorded as an `exception` event.
  private settle(exit: Exit.Exit<unknown, unknown>): void {
    this.statusCode = 1
    if (exit._tag === "Success") return
    if (Cause.isInterruptedOnly(exit.cause)) {
      this.attributes.set("span.label", "⚠︎ Interrupted")
      this.attributes.set("status.interrupted", true)
      this.statusMessage = Cause.pretty(exit.cause)
      return
    }
    const first = Cause.prettyErrors(exit.cause)[0]
    if (first === undefined) return
    this.record({
      name: "exception",
      unixNanos: this.endUnixNanos,
      attributes: {
        "exception.type": first.name,
        "exception.message": first.message,
        "exception.stacktrace": Cause.pretty(exit.cause, { renderErrorCause: true })
      }
    })
    this.statusCode = 2
    this.statusMessage = first.message
  }
}

// The runtime calls `context` around every fiber step: the default tracer's own function keeps
// that call site seeing one function, as cheap as without tracing.
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
