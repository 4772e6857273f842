/**
 * The dispatcher's metrics and spans (contract §8), kept apart from the delivery logic. With the
 * tracer off no span is made, but an attempt still sends a `traceparent` in its event's trace.
 */
import * as Metrics from "@waybill/core/Metrics"
import * as TraceContext from "@waybill/core/TraceContext"
import * as Tracing from "@waybill/core/Tracing"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import type { ClaimedDelivery, Completion, NewDelivery } from "../DeliveryStore.js"
import type { OutboxEvent } from "../OutboxReader.js"

interface Ended {
  readonly claimed: ClaimedDelivery
  readonly completion: Completion
}

export const recordOutcome = ({ completion }: Ended): void => {
  Metrics.recordAttempt(completion.attempt.error ?? "success", completion.attempt.durationMs)
  if (completion.status === "succeeded" || completion.status === "failed") {
    Metrics.recordDelivery(completion.status, completion.latencyMs ?? undefined)
  }
}

const parentOf = (traceparent: string | null | undefined): Option.Option<Tracer.ExternalSpan> =>
  Option.map(TraceContext.parse(traceparent), TraceContext.externalSpan)

/** Runs an attempt with its `traceparent`: a `webhook.attempt` span's id with the tracer on, else a fresh one. */
export const traced = <A extends Ended>(
  claimed: ClaimedDelivery,
  attempt: (traceparent: string) => Effect.Effect<A>
): Effect.Effect<A> =>
  Effect.withFiberRuntime((fiber, running) => {
    if (!fiber.getFiberRef(FiberRef.currentTracerEnabled)) return attempt(TraceContext.child(claimed.traceparent))
    return Tracing.fiberSpan(
      fiber,
      running,
      { name: "webhook.attempt", parent: parentOf(claimed.traceparent), kind: "client" },
      (span) => {
        span.attribute("waybill.delivery.id", claimed.id)
        span.attribute("waybill.event.type", claimed.eventType)
        span.attribute("waybill.delivery.attempt", claimed.attempts + 1)
        return attempt(TraceContext.format({ traceId: span.traceId, spanId: span.spanId, sampled: span.sampled }))
      },
      (span, exit) => {
        if (Exit.isSuccess(exit)) {
          const { completion } = exit.value
          if (completion.attempt.statusCode !== null) {
            span.attribute("http.response.status_code", completion.attempt.statusCode)
          }
          if (completion.attempt.error !== null) span.attribute("error.type", completion.attempt.error)
          span.attribute("waybill.delivery.status", completion.status)
        }
      }
    )
  })

/** With the tracer on, one `webhook.fan_out` span per event read, in the event's trace. */
export const traceFanOut = (
  events: ReadonlyArray<OutboxEvent>,
  deliveries: ReadonlyArray<NewDelivery>,
  startNanos: bigint
): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    if (!fiber.getFiberRef(FiberRef.currentTracerEnabled) || events.length === 0) return Effect.void
    const made = new Map<string, number>()
    for (const delivery of deliveries) made.set(delivery.eventId, (made.get(delivery.eventId) ?? 0) + 1)
    return Effect.tracerWith((tracer) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          const end = clock.unsafeCurrentTimeNanos()
          for (const event of events) {
            const parent = parentOf(event.traceparent)
            const span = tracer.span("webhook.fan_out", parent, Context.empty(), [], startNanos, "internal")
            span.attribute("waybill.event.id", event.id)
            span.attribute("waybill.event.type", event.type)
            span.attribute("waybill.deliveries", made.get(event.id) ?? 0)
            span.end(end, Exit.void)
          }
        })
      )
    )
  })
