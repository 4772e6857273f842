/** A span as the OTLP encoders read it when it ends: the tracer's span itself, no second object. */
import type * as Tracer from "effect/Tracer"

/** OTLP's `SpanKind` numbers (the API's plus one: 0 is "unspecified"). */
export type SpanKindCode = 1 | 2 | 3 | 4 | 5

/** The OTLP `SpanKind` of each of Effect's kinds. */
export const kindCodes: Record<Tracer.SpanKind, SpanKindCode> = {
  internal: 1,
  server: 2,
  client: 3,
  producer: 4,
  consumer: 5
}

// `flags` of a span and a link: the W3C trace flags (sampled: only sampled spans are exported),
// and whether the parent's remoteness is known (always, here) and true.
const SAMPLED = 0x1
const HAS_IS_REMOTE = 0x100
const IS_REMOTE = 0x200

/** The OTLP `flags` of a span or link whose parent (or target) is remote or not. */
export const flagsOf = (remote: boolean): number => SAMPLED | HAS_IS_REMOTE | (remote ? IS_REMOTE : 0)

const INT64_LIMIT = 2 ** 63

/** Whether a number is written as OTLP's `int_value` (an integer in int64's range), else `double_value`. */
export const isInt64 = (value: number): boolean =>
  Number.isInteger(value) && value >= -INT64_LIMIT && value < INT64_LIMIT

/** Each attribute of a span's map, or of an event's or link's record, in order. */
export const forEachAttribute = (
  values: ReadonlyMap<string, unknown> | Readonly<Record<string, unknown>>,
  f: (key: string, value: unknown) => void
): void => {
  if (values instanceof Map) {
    values.forEach((value, key) => {
      f(key, value)
    })
    return
  }
  const record = values as Readonly<Record<string, unknown>>
  for (const key in record) f(key, record[key])
}

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
