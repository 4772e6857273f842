/**
 * OTLP/protobuf bytes written straight from an ended span, field for field as the SDK's own
 * serializer writes them (the test holds the two byte-equal).
 */
import * as Inspectable from "effect/Inspectable"
import { type EndedSpan, flagsOf, forEachAttribute, isInt64, kindCodes } from "./endedSpan.js"

const INITIAL_BYTES = 64 * 1024
const TWO_POW_32 = 0x1_0000_0000

// Each lowercase hex digit's value by its character code: one load per digit, no branch.
const NIBBLES = new Uint8Array(128)
for (let digit = 0; digit < 16; digit++) NIBBLES[digit.toString(16).charCodeAt(0)] = digit

const varintSize = (value: number) => {
  let size = 1
  for (let rest = value >>> 7; rest > 0; rest >>>= 7) size++
  return size
}

/** A growable buffer of protobuf fields. */
export class ProtoWriter {
  private bytes: Buffer
  private view: DataView
  pos = 0

  constructor(size = INITIAL_BYTES) {
    this.bytes = Buffer.allocUnsafe(size)
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.length)
  }

  private ensure(extra: number): void {
    if (this.pos + extra <= this.bytes.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.pos + extra))
    this.bytes.copy(grown, 0, 0, this.pos)
    this.bytes = grown
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.length)
  }

  /** What is written, without a copy: for a writer that is written no more. */
  written(): Uint8Array {
    return this.bytes.subarray(0, this.pos)
  }

  /** What is written, appended to `other`; this writer emptied for reuse. */
  drainInto(other: ProtoWriter): void {
    other.raw(this.bytes.subarray(0, this.pos))
    this.pos = 0
  }

  /** A non-negative integer below 2^53, or any int64 as its two's complement. */
  varint(value: number): void {
    this.ensure(10)
    if (value >= 0 && value < 0x80) {
      this.bytes[this.pos++] = value
      return
    }
    if (value >= 0 && value <= Number.MAX_SAFE_INTEGER) {
      let low = value >>> 0
      let high = Math.floor(value / TWO_POW_32)
      while (high > 0) {
        this.bytes[this.pos++] = (low & 0x7f) | 0x80
        low = ((low >>> 7) | (high << 25)) >>> 0
        high >>>= 7
      }
      while (low > 0x7f) {
        this.bytes[this.pos++] = (low & 0x7f) | 0x80
        low >>>= 7
      }
      this.bytes[this.pos++] = low
      return
    }
    let rest = BigInt.asUintN(64, BigInt(value))
    while (rest > 0x7fn) {
      this.bytes[this.pos++] = Number(rest & 0x7fn) | 0x80
      rest >>= 7n
    }
    this.bytes[this.pos++] = Number(rest)
  }

  tag(field: number, wireType: 0 | 1 | 2 | 5): void {
    this.varint((field << 3) | wireType)
  }

  /** A varint field: its tag, then the value. */
  varintField(field: number, value: number): void {
    this.tag(field, 0)
    this.varint(value)
  }

  /** A string field: its tag, then the text. */
  stringField(field: number, text: string): void {
    this.tag(field, 2)
    this.string(text)
  }

  /** An id's field: its tag, then the bytes of its lowercase hex (checked where it was made). */
  hexField(field: number, text: string): void {
    this.tag(field, 2)
    const length = text.length >>> 1
    this.ensure(length + 1)
    const { bytes } = this
    bytes[this.pos++] = length
    for (let i = 0; i < text.length; i += 2) {
      bytes[this.pos++] = (NIBBLES[text.charCodeAt(i)]! << 4) | NIBBLES[text.charCodeAt(i + 1)]!
    }
  }

  /** A fixed64 field (a time in nanoseconds), little-endian. */
  fixed64Field(field: number, value: bigint): void {
    this.tag(field, 1)
    this.ensure(8)
    this.view.setBigUint64(this.pos, value, true)
    this.pos += 8
  }

  fixed32(value: number): void {
    this.ensure(4)
    this.view.setUint32(this.pos, value, true)
    this.pos += 4
  }

  double(value: number): void {
    this.ensure(8)
    this.view.setFloat64(this.pos, value, true)
    this.pos += 8
  }

  string(text: string): void {
    // UTF-8 takes at most three bytes per UTF-16 unit; the length is written after the text.
    this.ensure(text.length * 3 + 5)
    const start = this.begin()
    // Short ASCII (names, keys, ids: nearly every string here) byte by byte: a call into
    // Buffer's encoder costs more than the copy.
    const { bytes } = this
    let at = this.pos
    if (text.length < 64) {
      for (let i = 0; i < text.length; i++) {
        const code = text.charCodeAt(i)
        if (code >= 0x80) {
          at = -1
          break
        }
        bytes[at++] = code
      }
    } else at = -1
    this.pos = at === -1 ? this.pos + bytes.write(text, this.pos, "utf8") : at
    this.finish(start)
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length)
    this.bytes.set(bytes, this.pos)
    this.pos += bytes.length
  }

  /** Opens a length-delimited field's body: one byte kept for its length. */
  begin(): number {
    this.ensure(1)
    return this.pos++
  }

  /** Closes the body opened at `start`: its length written, the body moved on if that took more than a byte. */
  finish(start: number): void {
    const length = this.pos - start - 1
    if (length < 0x80) {
      this.bytes[start] = length
      return
    }
    const size = varintSize(length)
    this.ensure(size - 1)
    this.bytes.copyWithin(start + size, start + 1, this.pos)
    this.pos += size - 1
    let at = start
    let rest = length
    while (rest > 0x7f) {
      this.bytes[at++] = (rest & 0x7f) | 0x80
      rest >>>= 7
    }
    this.bytes[at] = rest
  }
}

// An attribute's value as `AnyValue`, as the SDK writes one (a bigint as text, as
// `@effect/opentelemetry` passes it; an object or a function as its text).
const anyValue = (writer: ProtoWriter, value: unknown): void => {
  switch (typeof value) {
    case "string":
      writer.tag(1, 2)
      writer.string(value)
      return
    case "boolean":
      writer.tag(2, 0)
      writer.varint(value ? 1 : 0)
      return
    case "number":
      if (isInt64(value)) {
        writer.tag(3, 0)
        writer.varint(value)
      } else {
        writer.tag(4, 1)
        writer.double(value)
      }
      return
    case "bigint":
      writer.tag(1, 2)
      writer.string(value.toString())
      return
    default:
      writer.tag(1, 2)
      writer.string(Inspectable.toStringUnknown(value))
  }
}

const keyValue = (writer: ProtoWriter, field: number, key: string, value: unknown): void => {
  writer.tag(field, 2)
  const pair = writer.begin()
  writer.stringField(1, key)
  writer.tag(2, 2)
  const inner = writer.begin()
  anyValue(writer, value)
  writer.finish(inner)
  writer.finish(pair)
}

/** Each attribute as a `KeyValue` in `field`. */
export const attributes = (
  writer: ProtoWriter,
  field: number,
  values: ReadonlyMap<string, unknown> | Readonly<Record<string, unknown>>
): void => forEachAttribute(values, (key, value) => keyValue(writer, field, key, value))

/** One ended, sampled span as a `Span` in a `ScopeSpans` (field 2). */
export const span = (writer: ProtoWriter, ended: EndedSpan): void => {
  writer.tag(2, 2)
  const body = writer.begin()
  writer.hexField(1, ended.traceId)
  writer.hexField(2, ended.spanId)
  if (ended.parentSpanId !== undefined) writer.hexField(4, ended.parentSpanId)
  writer.stringField(5, ended.name)
  writer.varintField(6, kindCodes[ended.kind])
  writer.fixed64Field(7, ended.startUnixNanos)
  writer.fixed64Field(8, ended.endUnixNanos)
  attributes(writer, 9, ended.attributes)
  writer.varintField(10, 0)
  for (const event of ended.events) {
    writer.tag(11, 2)
    const start = writer.begin()
    writer.fixed64Field(1, event.unixNanos)
    writer.stringField(2, event.name)
    if (event.attributes !== undefined) attributes(writer, 3, event.attributes)
    writer.varintField(4, 0)
    writer.finish(start)
  }
  writer.varintField(12, 0)
  for (const link of ended.links) {
    writer.tag(13, 2)
    const start = writer.begin()
    writer.hexField(1, link.span.traceId)
    writer.hexField(2, link.span.spanId)
    attributes(writer, 4, link.attributes)
    writer.varintField(5, 0)
    writer.tag(6, 5)
    writer.fixed32(flagsOf(link.span._tag === "ExternalSpan"))
    writer.finish(start)
  }
  writer.varintField(14, 0)
  writer.tag(15, 2)
  const status = writer.begin()
  if (ended.statusMessage !== undefined && ended.statusMessage !== "") writer.stringField(2, ended.statusMessage)
  writer.varintField(3, ended.statusCode)
  writer.finish(status)
  writer.tag(16, 5)
  writer.fixed32(flagsOf(ended.parentRemote))
  writer.finish(body)
}

/** Who sends the spans: the resource's attributes and the instrumentation scope. */
export interface Sender {
  readonly resource: Readonly<Record<string, unknown>>
  readonly scope: { readonly name: string; readonly version?: string | undefined }
}

/**
 * The `ExportTraceServiceRequest` around the spans a writer holds, for `sender`, in a buffer of its
 * own; the writer is emptied for the next batch.
 */
export const requests = (sender: Sender): ((writer: ProtoWriter) => Uint8Array) => {
  const head = new ProtoWriter(1024)
  head.tag(1, 2)
  const resource = head.begin()
  attributes(head, 1, sender.resource)
  head.varintField(2, 0)
  head.finish(resource)
  const resourceEnd = head.pos
  head.tag(1, 2)
  const scope = head.begin()
  head.stringField(1, sender.scope.name)
  if (sender.scope.version !== undefined && sender.scope.version !== "") head.stringField(2, sender.scope.version)
  head.finish(scope)
  const fields = head.written()
  const resourceField = fields.subarray(0, resourceEnd)
  const scopeField = fields.subarray(resourceEnd)
  return (writer) => {
    const scopeSpansLength = scopeField.length + writer.pos
    const resourceSpansLength = resourceField.length + 1 + varintSize(scopeSpansLength) + scopeSpansLength
    const out = new ProtoWriter(resourceSpansLength + 16)
    out.tag(1, 2)
    out.varint(resourceSpansLength)
    out.raw(resourceField)
    out.tag(2, 2)
    out.varint(scopeSpansLength)
    out.raw(scopeField)
    writer.drainInto(out)
    return out.written()
  }
}
