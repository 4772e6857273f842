import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fc from "fast-check"
import * as TraceContext from "../src/TraceContext.js"

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const spanId = "00f067aa0ba902b7"
const valid = `00-${traceId}-${spanId}-01`

describe("TraceContext", () => {
  it("parses a valid traceparent and formats it back", () => {
    const parsed = Option.getOrThrow(TraceContext.parse(valid))
    assert.deepStrictEqual(parsed, { traceId, spanId, sampled: true })
    assert.strictEqual(TraceContext.format(parsed), valid)
    assert.isFalse(Option.getOrThrow(TraceContext.parse(`00-${traceId}-${spanId}-00`)).sampled)
    // A later version may carry more after a dash.
    assert.isTrue(Option.isSome(TraceContext.parse(`01-${traceId}-${spanId}-01-more`)))
  })

  it("parses every header as the recommendation's grammar does, fast path or not", () => {
    // The grammar as one expression, the reference the fast path of `parse` must agree with.
    const reference = (header: string) => {
      const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/.exec(header.trim())
      if (match === null) return Option.none()
      const [, version, trace, span, flags, rest] = match
      if (version === "ff" || (version === "00" && rest !== undefined)) return Option.none()
      if (/^0+$/.test(trace!) || /^0+$/.test(span!)) return Option.none()
      return Option.some({ traceId: trace!, spanId: span!, sampled: (Number.parseInt(flags!, 16) & 1) === 1 })
    }
    const hex = (length: number) =>
      fc.oneof(
        fc.stringMatching(new RegExp(`^[0-9a-f]{${length}}$`)),
        fc.constant("0".repeat(length)),
        fc.stringMatching(new RegExp(`^[0-9a-fA-F]{${length - 1},${length + 1}}$`))
      )
    const header = fc
      .tuple(
        fc.constantFrom("00", "01", "ff", "0g", "0"),
        hex(32),
        hex(16),
        fc.oneof(hex(2), fc.constantFrom("01", "00", "03", "ff")),
        fc.constantFrom("", "-more", "-", " "),
        fc.constantFrom("", " ")
      )
      .map(([version, trace, span, flags, tail, pad]) => `${pad}${version}-${trace}-${span}-${flags}${tail}`)
    fc.assert(
      fc.property(header, (text) => {
        assert.deepStrictEqual(TraceContext.parse(text), reference(text), text)
      }),
      { numRuns: 2000 }
    )
  })

  it("refuses what the recommendation refuses", () => {
    for (const header of [
      undefined,
      null,
      "",
      "garbage",
      `ff-${traceId}-${spanId}-01`,
      `00-${"0".repeat(32)}-${spanId}-01`,
      `00-${traceId}-${"0".repeat(16)}-01`,
      `00-${traceId.toUpperCase()}-${spanId}-01`,
      `00-${traceId}-${spanId}-01-extra`,
      `00-${traceId.slice(1)}-${spanId}-01`,
      `00-${traceId}-${spanId}-1`
    ]) {
      assert.isTrue(Option.isNone(TraceContext.parse(header)), String(header))
    }
  })

  it("a child keeps the trace and flags with a span of its own; none starts a trace", () => {
    const child = Option.getOrThrow(TraceContext.parse(TraceContext.child(valid)))
    assert.strictEqual(child.traceId, traceId)
    assert.notStrictEqual(child.spanId, spanId)
    assert.isTrue(child.sampled)
    const fresh = Option.getOrThrow(TraceContext.parse(TraceContext.child(null)))
    assert.notStrictEqual(fresh.traceId, traceId)
    assert.notStrictEqual(
      fresh.traceId,
      Option.getOrThrow(TraceContext.parse(TraceContext.child("not a header"))).traceId
    )
  })

  it("a child of any header is what parsing it and formatting a new span id gives", () => {
    const zeros = "0".repeat(32)
    for (const [stored, keepsTrace, sampled] of [
      [`00-${traceId}-${spanId}-00`, true, false],
      [`00-${traceId}-${spanId}-01`, true, true],
      // Other flag bits are not carried on; a later version's tail is dropped.
      [`00-${traceId}-${spanId}-03`, true, true],
      [`01-${traceId}-${spanId}-01-more`, true, true],
      // Invalid: a new trace, not sampled.
      [`00-${zeros}-${spanId}-01`, false, false],
      [`00-${traceId}-${"0".repeat(16)}-01`, false, false],
      [`00-${traceId.toUpperCase()}-${spanId}-01`, false, false]
    ] as const) {
      const header = TraceContext.child(stored)
      const child = Option.getOrThrow(TraceContext.parse(header))
      assert.strictEqual(header, TraceContext.format(child), stored)
      assert.strictEqual(child.traceId === traceId, keepsTrace, stored)
      assert.strictEqual(child.sampled, sampled, stored)
      assert.notStrictEqual(child.spanId, spanId, stored)
    }
    const ids = new Set(Array.from({ length: 1000 }, () => TraceContext.spanId()))
    assert.strictEqual(ids.size, 1000)
    for (const id of ids) assert.match(id, /^[0-9a-f]{16}$/)
    assert.match(TraceContext.traceId(), /^[0-9a-f]{32}$/)
  })

  it.effect("current: the incoming trace while no span is made, else a new trace", () =>
    Effect.gen(function* () {
      const continued = yield* TraceContext.current.pipe(
        TraceContext.withIncoming(valid),
        Effect.withTracerEnabled(false)
      )
      assert.strictEqual(continued, valid)
      // A span made with the tracer off stands for its parent.
      const underNoop = yield* TraceContext.current.pipe(
        Effect.withSpan("noop"),
        TraceContext.withIncoming(valid),
        Effect.withTracerEnabled(false)
      )
      assert.strictEqual(underNoop, valid)
      const traced = Option.getOrThrow(
        TraceContext.parse(
          yield* TraceContext.current.pipe(Effect.withSpan("traced"), TraceContext.withIncoming(valid))
        )
      )
      assert.strictEqual(traced.traceId, traceId)
      assert.notStrictEqual(traced.spanId, spanId)
      const [a, b] = [yield* TraceContext.current, yield* TraceContext.current]
      assert.notStrictEqual(
        Option.getOrThrow(TraceContext.parse(a)).traceId,
        Option.getOrThrow(TraceContext.parse(b)).traceId
      )
      const ignored = Option.getOrThrow(
        TraceContext.parse(yield* TraceContext.current.pipe(TraceContext.withIncoming("bad")))
      )
      assert.notStrictEqual(ignored.traceId, traceId)
    })
  )
})
