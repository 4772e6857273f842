/**
 * OTLP/JSON text of an ended span: proto3's JSON mapping as OTLP reads it (ids in hex, enums as
 * numbers, 64-bit integers as decimal text).
 */
import * as Inspectable from "effect/Inspectable"
import { type EndedSpan, flagsOf, forEachAttribute, isInt64, kindCodes } from "./endedSpan.js"
import type { Sender } from "./otlpProtobuf.js"

const anyValue = (value: unknown): Record<string, unknown> => {
  switch (typeof value) {
    case "string":
      return { stringValue: value }
    case "boolean":
      return { boolValue: value }
    case "number":
      return isInt64(value) ? { intValue: BigInt(value).toString() } : { doubleValue: value }
    case "bigint":
      return { stringValue: value.toString() }
    default:
      return { stringValue: Inspectable.toStringUnknown(value) }
  }
}

const attributes = (values: ReadonlyMap<string, unknown> | Readonly<Record<string, unknown>>) => {
  const out: Array<{ key: string; value: Record<string, unknown> }> = []
  forEachAttribute(values, (key, value) => {
    out.push({ key, value: anyValue(value) })
  })
  return out
}

/** One ended, sampled span as the text of a `Span`. */
export const span = (ended: EndedSpan): string =>
  JSON.stringify({
    traceId: ended.traceId,
    spanId: ended.spanId,
    ...(ended.parentSpanId === undefined ? {} : { parentSpanId: ended.parentSpanId }),
    name: ended.name,
    kind: kindCodes[ended.kind],
    startTimeUnixNano: ended.startUnixNanos.toString(),
    endTimeUnixNano: ended.endUnixNanos.toString(),
    attributes: attributes(ended.attributes),
    droppedAttributesCount: 0,
    events: ended.events.map((event) => ({
      timeUnixNano: event.unixNanos.toString(),
      name: event.name,
      attributes: event.attributes === undefined ? [] : attributes(event.attributes),
      droppedAttributesCount: 0
    })),
    droppedEventsCount: 0,
    links: ended.links.map((link) => ({
      traceId: link.span.traceId,
      spanId: link.span.spanId,
      attributes: attributes(link.attributes),
      droppedAttributesCount: 0,
      flags: flagsOf(link.span._tag === "ExternalSpan")
    })),
    droppedLinksCount: 0,
    status: {
      code: ended.statusCode,
      ...(ended.statusMessage === undefined || ended.statusMessage === "" ? {} : { message: ended.statusMessage })
    },
    flags: flagsOf(ended.parentRemote)
  })

const encoder = new TextEncoder()

/** The `ExportTraceServiceRequest` around span texts for `sender`, as UTF-8. */
export const requests = (sender: Sender): ((spans: ReadonlyArray<string>) => Uint8Array) => {
  const resource = JSON.stringify({ attributes: attributes(sender.resource), droppedAttributesCount: 0 })
  const scope = JSON.stringify({
    name: sender.scope.name,
    ...(sender.scope.version === undefined || sender.scope.version === "" ? {} : { version: sender.scope.version })
  })
  const head = `{"resourceSpans":[{"resource":${resource},"scopeSpans":[{"scope":${scope},"spans":[`
  return (spans) => encoder.encode(`${head}${spans.join(",")}]}]}]}`)
}
