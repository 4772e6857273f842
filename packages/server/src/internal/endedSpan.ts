/**
 * A span as the exporter reads it when it ends: what the OTLP encoders write
 * (`otlpProtobuf.ts`, `otlpJson.ts`), read from the tracer's span itself, so that ending a
 * span makes no second object for it.
 */
import type * as Tracer from "effect/Tracer"

/** OTLP's `SpanKind` numbers (the API's plus one: 0 is "unspecified"). */
export type SpanKindCode = 1 | 2 | 3 | 4 | 5

/** OTLP's `Status.code`: unset, OK, error. */
export type StatusCode = 0 | 1 | 2

/** An event of a span (the `exception` of a failure). */
export interface SpanEvent {
  readonly name: string
  readonly unixNanos: bigint
  readonly attributes: Readonly<Record<string, unknown>> | undefined
}

/** An ended, sampled span. */
export interface EndedSpan {
  readonly name: string
  readonly kind: Tracer.SpanKind
  readonly traceId: string
  readonly spanId: string
  /** The parent's span id; none for the root of a trace. */
  readonly parentSpanId: string | undefined
  /** Whether the parent came from elsewhere (a `traceparent`), not from this process. */
  readonly parentRemote: boolean
  readonly startUnixNanos: bigint
  readonly endUnixNanos: bigint
  readonly attributes: ReadonlyMap<string, unknown>
  readonly events: ReadonlyArray<SpanEvent>
  readonly links: ReadonlyArray<Tracer.SpanLink>
  readonly statusCode: StatusCode
  readonly statusMessage: string | undefined
}

/** Where ended spans go: written at once (an encoder's batch) or kept (a test). */
export interface SpanSink {
  readonly onEnd: (span: EndedSpan) => void
}
