/**
 * Spans written into OTLP batches as they end, sent one batch at a time as the SDK's batch span
 * processor would (`OTEL_BSP_*`). What waits is bytes, not span objects (docs/decisions/0093).
 */
import type { SpanResult } from "@waybill/core/Metrics"
import type { TracingBatch } from "../Config.js"
import type { EndedSpan, SpanSink } from "./endedSpan.js"
import * as OtlpJson from "./otlpJson.js"
import * as OtlpProtobuf from "./otlpProtobuf.js"

/** Sends one request body of `count` spans; `done(true)` once the receiver took it. */
export type Send = (body: Uint8Array, count: number, done: (sent: boolean) => void) => void

/** How spans become a request body: each written as it ends, the body taken when the batch closes. */
export interface Format {
  readonly write: (span: EndedSpan) => void
  /** The body of the spans written since the last, and a fresh batch begun. */
  readonly seal: () => Uint8Array
}

/** OTLP/protobuf: a batch is the bytes of its spans, in one buffer used again for every batch. */
export const protobuf = (sender: OtlpProtobuf.Sender): Format => {
  const writer = new OtlpProtobuf.ProtoWriter()
  const request = OtlpProtobuf.requests(sender)
  return {
    write: (span) => {
      // A span that fails half-written leaves nothing of it in the batch.
      const start = writer.pos
      try {
        OtlpProtobuf.span(writer, span)
      } catch (error) {
        writer.pos = start
        throw error
      }
    },
    seal: () => request(writer)
  }
}

/** OTLP/JSON: a batch is the texts of its spans. */
export const json = (sender: OtlpProtobuf.Sender): Format => {
  const request = OtlpJson.requests(sender)
  let texts: Array<string> = []
  return {
    write: (span) => {
      texts.push(OtlpJson.span(span))
    },
    seal: () => {
      const body = request(texts)
      texts = []
      return body
    }
  }
}

interface Sealed {
  readonly body: Uint8Array
  readonly count: number
}

/** Where what became of the spans is told: `count` of them ended as `result`. */
export type Recorder = (result: SpanResult, count: number) => void

/** The sink of ended spans; `flush` sends what waits, `close` stops the timer after a flush. */
export interface SpanBatches extends SpanSink {
  readonly flush: () => Promise<void>
  readonly close: () => Promise<void>
}

/** Batches of `format` sent by `send` as `settings` say; what became of each span goes to `record`. */
export const make = (format: Format, send: Send, settings: TracingBatch, record: Recorder): SpanBatches => {
  let openCount = 0
  const sealed: Array<Sealed> = []
  // Spans written and not yet sent or failed: what `maxQueueSize` bounds.
  let waiting = 0
  let sending = false
  let idle: Array<() => void> = []

  const seal = () => {
    if (openCount === 0) return
    const count = openCount
    openCount = 0
    try {
      sealed.push({ body: format.seal(), count })
    } catch {
      // Nothing in a span should fail to encode; if one does, its batch is lost, not the process.
      waiting -= count
      record("failed", count)
    }
  }

  const pump = (): void => {
    if (sending) return
    const next = sealed.shift()
    if (next === undefined) {
      const waiters = idle
      idle = []
      for (const resolve of waiters) resolve()
      return
    }
    sending = true
    send(next.body, next.count, (ok) => {
      waiting -= next.count
      record(ok ? "exported" : "failed", next.count)
      sending = false
      pump()
    })
  }

  const timer = setInterval(() => {
    seal()
    pump()
  }, settings.scheduledDelayMillis)
  timer.unref()

  const flush = () =>
    new Promise<void>((resolve) => {
      seal()
      idle.push(resolve)
      pump()
    })

  return {
    onEnd: (span) => {
      if (waiting >= settings.maxQueueSize) {
        record("dropped", 1)
        return
      }
      try {
        format.write(span)
      } catch {
        // Nothing in a span should fail to encode; if one does, it is lost, not its batch.
        record("failed", 1)
        return
      }
      openCount++
      waiting++
      if (openCount >= settings.maxExportBatchSize) {
        seal()
        pump()
      }
    },
    flush,
    close: async () => {
      clearInterval(timer)
      await flush()
    }
  }
}
