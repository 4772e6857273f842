/**
 * A span that is not recorded and stands for its parent, carrying its ids and sampling flag: a
 * span made inside it joins the parent. Nothing reaches the SDK.
 */
import * as Context from "effect/Context"
import type * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"

const noAttributes: ReadonlyMap<string, unknown> = new Map()
const noLinks: ReadonlyArray<Tracer.SpanLink> = []
const noContext = Context.empty()

/** A span for `parent` that records nothing; without a parent, ids that start no trace. */
export class UnrecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId: string
  readonly traceId: string
  readonly sampled: boolean
  readonly context = noContext
  readonly attributes = noAttributes
  readonly links = noLinks
  status: Tracer.SpanStatus
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    const stands = Option.getOrUndefined(parent)
    this.traceId = stands?.traceId ?? "unrecorded"
    this.spanId = stands?.spanId ?? "unrecorded"
    // What a span made inside reads as its parent's sampling decision.
    this.sampled = stands?.sampled ?? false
    this.status = { _tag: "Started", startTime }
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(_key: string, _value: unknown): void {}
  event(_name: string, _startTime: bigint, _attributes?: Record<string, unknown>): void {}
  addLinks(_links: ReadonlyArray<Tracer.SpanLink>): void {}
}
