/**
 * W3C Trace Context (`traceparent`): read from a request, stored with each event, sent by every attempt
 * with a span id of its own, so that the trace survives the outbox whether or not a tracer is on.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as RandomBytes from "./RandomBytes.js"

/** A parsed `traceparent`: 32 and 16 lowercase hex digits, neither all zeros, and the sampled flag. @since 0.1.0 */
export interface TraceParent {
  readonly traceId: string
  readonly spanId: string
  readonly sampled: boolean
}

const HEADER = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
// A version 00 header with ids that are not all zeros: read by position, no captures (`parse`).
const VERSION_00 = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/
// A header as `format` writes it: what `child` needs no parse for.
const STORED = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-0[01]$/
const ZERO_TRACE = "0".repeat(32)
const ZERO_SPAN = "0".repeat(16)

const isTraceId = (id: string) => id.length === 32 && id !== ZERO_TRACE && /^[0-9a-f]{32}$/.test(id)
const isSpanId = (id: string) => id.length === 16 && id !== ZERO_SPAN && /^[0-9a-f]{16}$/.test(id)

/**
 * Parses a `traceparent` header as the W3C recommendation reads it (a later version may carry more
 * after a dash); version `ff`, all-zero ids or anything else is `None`.
 * @since 0.1.0
 */
export const parse = (header: string | null | undefined): Option.Option<TraceParent> => {
  if (header === null || header === undefined || header.length > 512) return Option.none()
  // Nearly every header: version 00, as long as it must be (read on every request and event).
  if (header.length === 55 && VERSION_00.test(header)) {
    return Option.some({
      traceId: header.slice(3, 35),
      spanId: header.slice(36, 52),
      sampled: (Number.parseInt(header.slice(53), 16) & 1) === 1
    })
  }
  const match = HEADER.exec(header.trim())
  if (match === null) return Option.none()
  const [, version, traceId, spanId, flags, rest] = match
  if (version === "ff" || (version === "00" && rest !== undefined)) return Option.none()
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return Option.none()
  return Option.some({ traceId: traceId!, spanId: spanId!, sampled: (Number.parseInt(flags!, 16) & 1) === 1 })
}

/** The header for a trace context: `00-<trace id>-<span id>-<flags>`. @since 0.1.0 */
export const format = (context: TraceParent): string =>
  `00-${context.traceId}-${context.spanId}-${context.sampled ? "01" : "00"}`

/** A fresh span id: 16 random hex digits. @since 0.1.0 */
export const spanId = (): string => RandomBytes.hex(8)

/** A fresh trace id: 32 random hex digits. @since 0.1.0 */
export const traceId = (): string => RandomBytes.hex(16)

/** A new trace: random ids, sampled as `sampled` says. @since 0.1.0 */
export const root = (sampled: boolean): TraceParent => ({ traceId: traceId(), spanId: spanId(), sampled })

/**
 * The header for a new span in the trace of `stored` (an event's `traceparent`): the same trace
 * id and flags, a span id of its own; a new trace when `stored` is absent or invalid.
 * @since 0.1.0
 */
export const child = (stored: string | null | undefined): string => {
  // The header this library stores (version 00, flags 00 or 01): its span id replaced in place.
  if (stored !== null && stored !== undefined && stored.length === 55 && STORED.test(stored)) {
    return `${stored.slice(0, 36)}${spanId()}${stored.slice(52)}`
  }
  const parent = parse(stored)
  return format(
    Option.isSome(parent)
      ? { traceId: parent.value.traceId, spanId: spanId(), sampled: parent.value.sampled }
      : root(false)
  )
}

/** A span as the parent of spans made here: the trace context of a stored header. @since 0.1.0 */
export const externalSpan = (context: TraceParent): Tracer.ExternalSpan =>
  Tracer.externalSpan({ traceId: context.traceId, spanId: context.spanId, sampled: context.sampled })

/** Whether a span has ids a trace can carry: not a no-op span made while the tracer is off. @since 0.1.0 */
export const hasIds = (span: Tracer.AnySpan): boolean => isTraceId(span.traceId) && isSpanId(span.spanId)

// The innermost span of the fiber with real ids. A span made while the tracer is off is a no-op
// span (its ids are not hex); its parent is what it stood for.
const currentOf = (context: Context.Context<never>): Option.Option<TraceParent> => {
  let span: Option.Option<Tracer.AnySpan> = Context.getOption(context, Tracer.ParentSpan)
  while (Option.isSome(span)) {
    const value = span.value
    if (hasIds(value)) {
      return Option.some({ traceId: value.traceId, spanId: value.spanId, sampled: value.sampled })
    }
    span = value._tag === "Span" ? value.parent : Option.none()
  }
  return Option.none()
}

/**
 * The fiber's trace context as a header: its current span (a traced request's, or the
 * `traceparent` it brought, `withIncoming`), else a new trace, not sampled. What an event stores.
 * @since 0.1.0
 */
export const current: Effect.Effect<string> = Effect.withFiberRuntime((fiber) =>
  Effect.succeed(format(Option.getOrElse(currentOf(fiber.currentContext), () => root(false))))
)

/**
 * Runs `self` in the trace of an incoming `traceparent` while it has no span of its own (the tracer
 * is off), so that `current` answers that trace. An absent or invalid header changes nothing.
 * @since 0.1.0
 */
export const withIncoming =
  (header: string | null | undefined) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    if (header === null || header === undefined) return self
    const incoming = parse(header)
    if (Option.isNone(incoming)) return self
    return Effect.withFiberRuntime((fiber) =>
      Option.isSome(currentOf(fiber.currentContext))
        ? self
        : Effect.provideService(self, Tracer.ParentSpan, externalSpan(incoming.value))
    )
  }
