/**
 * OTLP/JSON text of an ended span (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`): the protobuf
 * messages in proto3's JSON mapping as OTLP reads it (ids in hex, enums as numbers, 64-bit
 * integers as decimal text). A span becomes its text the moment it ends; a batch is those texts.
 */
import * as Inspectable from "effect/Inspectable"
import type { EndedSpan } from "./endedSpan.js"
import type { Sender } from "./otlpProtobuf.js"

const INT64_LIMIT = 2 ** 63
const HAS_IS_REMOTE = 0x100
const IS_REMOTE = 0x200

const anyValue = (value: unknown): Record<string, unknown> => {
  switch (typeof value) {
    case "string":
      return { stringValue: value }
    case "boolean":
      return { boolValue: value }
    case "number":
      return Number.isInteger(value) && value >= -INT64_LIMIT && value < INT64_LIMIT
        ? { intValue: BigInt(value).toString() }
        : { doubleValue: value }
    case "bigint":
      return { stringValue: value.toString() }
    default:
      return { stringValue: Inspectable.toStringUnknown(value) }
  }
}

const attributes = (values: ReadonlyMap<string, unknown> | Readonly<Record<string, unknown>>) => {
  const out: Array<{ key: string; value: Record<string, unknown> }> = []
  if (values instanceof Map) {
    values.forEach((value, key) => {
      out.push({ key, value: anyValue(value) })
    })
  } else {
    const record = values as Readonly<Record<string, unknown>>
    for (const key in record) out.push({ key, value: anyValue(record[key]) })
  }
  return out
}

const kinds: Record<EndedSpan["kind"], number> = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 }
const flagsOf = (remote: boolean) => 1 | HAS_IS_REMOTE | (remote ? IS_REMOTE : 0)

/** One ended, sampled span as the text of a `Span`. */
export const span = (ended: EndedSpan): string =>
  JSON.stringify({
    traceId: ended.traceId,
    spanId: ended.spanId,
    ...(ended.parentSpanId === undefined ? {} : { parentSpanId: ended.parentSpanId }),
    name: ended.name,
    kind: kinds[ended.kind],
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

/** The `ExportTraceServiceRequest` around span texts (`span`), as UTF-8. */
export const request = (sender: Sender, spans: ReadonlyArray<string>): Uint8Array => {
  const resource = JSON.stringify({ attributes: attributes(sender.resource), droppedAttributesCount: 0 })
  const scope = JSON.stringify({
    name: sender.scope.name,
    ...(sender.scope.version === undefined || sender.scope.version === "" ? {} : { version: sender.scope.version })
  })
  return encoder.encode(
    `{"resourceSpans":[{"resource":${resource},"scopeSpans":[{"scope":${scope},"spans":[${spans.join(",")}]}]}]}`
  )
}
