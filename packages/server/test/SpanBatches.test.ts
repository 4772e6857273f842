/**
 * The batches of ended spans, as the SDK's batch span processor would send them: a full batch at
 * once, the rest after the schedule's delay or on a flush, one request at a time, spans past the
 * queue's bound dropped (and room again once a request ends, sent or failed).
 */
import { assert, describe, it } from "vitest"
import type { EndedSpan } from "../src/internal/endedSpan.js"
import * as SpanBatches from "../src/internal/spanBatches.js"

const named = (name: string) => ({ name }) as EndedSpan

// Batches are the names of their spans; a body is those names, comma-separated.
const names = (): SpanBatches.Format => {
  let batch: Array<string> = []
  return {
    write: (span) => {
      if (span.name === "unwritable") throw new Error("cannot be written")
      batch.push(span.name)
    },
    seal: () => {
      const body = new TextEncoder().encode(batch.join(","))
      batch = []
      return body
    }
  }
}

const recording = () => {
  const requests: Array<{ readonly body: string; readonly done: (sent: boolean) => void }> = []
  const send: SpanBatches.Send = (body, _count, done) => requests.push({ body: new TextDecoder().decode(body), done })
  return { requests, send }
}

const settings = { scheduledDelayMillis: 60_000, maxQueueSize: 5, maxExportBatchSize: 2 }

// What the batches told of their spans, summed by result.
const tally = () => {
  const counts = { exported: 0, failed: 0, dropped: 0 }
  const record: SpanBatches.Recorder = (result, count) => {
    counts[result] += count
  }
  return { counts, record }
}

describe("span batches", () => {
  it("a full batch goes at once; the next waits for the request before it; a flush sends the rest", async () => {
    const { requests, send } = recording()
    const told = tally()
    const batches = SpanBatches.make(names(), send, settings, told.record)
    for (const name of ["a", "b", "c", "d", "e"]) batches.onEnd(named(name))
    assert.deepStrictEqual(
      requests.map((request) => request.body),
      ["a,b"]
    )
    requests[0]!.done(true)
    assert.deepStrictEqual(
      requests.map((request) => request.body),
      ["a,b", "c,d"]
    )
    let flushed = false
    const flush = batches.flush().then(() => {
      flushed = true
    })
    await Promise.resolve()
    assert.isFalse(flushed, "a flush waits for the request under way")
    requests[1]!.done(true)
    assert.deepStrictEqual(
      requests.map((request) => request.body),
      ["a,b", "c,d", "e"]
    )
    requests[2]!.done(false)
    await flush
    assert.deepStrictEqual(told.counts, { exported: 4, failed: 1, dropped: 0 })
    await batches.close()
  })

  it("past the queue's bound spans are dropped until a request ends", async () => {
    const { requests, send } = recording()
    const told = tally()
    const batches = SpanBatches.make(names(), send, settings, told.record)
    for (const name of ["a", "b", "c", "d", "e", "f", "g"]) batches.onEnd(named(name))
    assert.strictEqual(told.counts.dropped, 2)
    requests[0]!.done(false)
    batches.onEnd(named("h"))
    assert.strictEqual(told.counts.dropped, 2)
    const flush = batches.flush()
    requests[1]!.done(true)
    requests[2]!.done(true)
    await flush
    assert.deepStrictEqual(
      requests.map((request) => request.body),
      ["a,b", "c,d", "e,h"]
    )
    assert.deepStrictEqual(told.counts, { exported: 4, failed: 2, dropped: 2 })
    await batches.close()
  })

  it("a batch that is not full goes after the schedule's delay", async () => {
    const { requests, send } = recording()
    const batches = SpanBatches.make(names(), send, { ...settings, scheduledDelayMillis: 10 }, tally().record)
    batches.onEnd(named("a"))
    for (let waited = 0; requests.length === 0 && waited < 5_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    assert.deepStrictEqual(
      requests.map((request) => request.body),
      ["a"]
    )
    requests[0]!.done(true)
    await batches.close()
  })

  it("a span that cannot be written is counted failed; its batch goes without it", async () => {
    const { requests, send } = recording()
    const told = tally()
    const batches = SpanBatches.make(names(), send, settings, told.record)
    for (const name of ["a", "unwritable", "b"]) batches.onEnd(named(name))
    requests[0]!.done(true)
    assert.deepStrictEqual(
      requests.map((request) => request.body),
      ["a,b"]
    )
    assert.deepStrictEqual(told.counts, { exported: 2, failed: 1, dropped: 0 })
    await batches.close()
  })

  it("a flush with nothing waiting ends at once", async () => {
    const told = tally()
    const batches = SpanBatches.make(names(), recording().send, settings, told.record)
    await batches.flush()
    await batches.close()
    assert.deepStrictEqual(told.counts, { exported: 0, failed: 0, dropped: 0 })
  })
})
