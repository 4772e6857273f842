/**
 * Fan-out: `fanOutOnce` is one transaction a batch; `run`'s `fanOutStep` hands deliveries to the
 * loop and records them a moment later with their results, so a delivery costs one write.
 */
import * as Random_ from "@waybill/core/RandomBytes"
import * as Tracing from "@waybill/core/Tracing"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { countEndings } from "./completions.js"
import type { FanOutParts } from "./deliveryLoop.js"
import * as Engine from "./engine.js"
import type { Env } from "./env.js"
import { handOff } from "./handOff.js"
import { traceFanOut } from "./instrument.js"

/** One batch under the fan-out lease for the transaction (none while a `run` holds it). */
export const fanOutOnce = (env: Env): Effect.Effect<{ readonly events: number; readonly deliveries: number }> => {
  const { settings, outbox, store } = env
  return Effect.gen(function* () {
    const result = yield* env.transactor.withTransaction(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const owner = Random_.token()
        const position = yield* outbox.acquire(owner, now, now + settings.leaseMs)
        if (Option.isNone(position)) return { events: 0, deliveries: 0 }
        const { events, webhooksVersion } = yield* outbox.read(position.value, settings.fanOutBatchSize)
        const deliveries = events.length === 0 ? [] : yield* env.matcher.deliveriesOf(events, now, webhooksVersion)
        yield* traceFanOut(events, deliveries, BigInt(now) * 1_000_000n)
        yield* store.insert(deliveries)
        yield* outbox.advance(owner, events.at(-1)?.position ?? position.value, 0)
        return { events: events.length, deliveries: deliveries.length }
      })
    )
    if (result.deliveries > 0) env.deliverWake.notify()
    return result
  }).pipe(Effect.withSpan("Dispatcher.fanOut", { captureStackTrace: false }))
}

/**
 * One step of `run`'s fan-out: reads as many events as the loop has room for and hands their
 * deliveries over; "blocked" when an event waits for its webhook's share of the loop.
 */
export const fanOutStep = (
  env: Env,
  loop: Engine.Loop,
  fan: Engine.FanOut
): Effect.Effect<"more" | "idle" | "full" | "blocked"> =>
  Effect.gen(function* () {
    const { settings, outbox } = env
    const room = settings.window - loop.lanes.held()
    if (room < settings.concurrency || loop.unwritten >= settings.maxUnwritten) return "full" as const
    const now = yield* Clock.currentTimeMillis
    // Takes the lease, or renews it while nothing waits to be recorded (recording renews it).
    if (fan.position === undefined || (fan.batches.length === 0 && fan.leaseUntil - now < settings.leaseMs / 2)) {
      const leaseUntil = now + settings.leaseMs
      const stored = yield* outbox.acquire(fan.owner, now, leaseUntil)
      if (Option.isNone(stored)) {
        Engine.batchesDropped(fan)
        return "idle" as const
      }
      Engine.leaseHeld(fan, stored.value, leaseUntil)
    }
    // Held back long enough: read a whole batch, to see whether another webhook waits behind it.
    const lookAhead = fan.blocked !== undefined && now - fan.blocked.since >= settings.recordDelayMs
    const limit = lookAhead ? settings.fanOutBatchSize : Math.min(fan.readLimit, room)
    const { events, waiting, webhooksVersion } = yield* outbox.read(fan.position!, limit)
    Engine.read(fan, events.length, waiting)
    if (events.length === 0) return "idle" as const
    const deliveries = yield* env.matcher.deliveriesOf(events, now, webhooksVersion)
    yield* traceFanOut(events, deliveries, BigInt(now) * 1_000_000n)
    const taken = handOff(settings, loop, fan, events, deliveries, now)
    if (Engine.handedOff(loop, fan, events, taken, now) === "blocked") return "blocked" as const
    return events.length < limit ? ("idle" as const) : ("more" as const)
  }).pipe(Tracing.withSpan("Dispatcher.fanOut", { captureStackTrace: false }))

// Inserts and moves the position in one transaction, only while this loop holds the fan-out
// lease; on failure everything read and not recorded is given up and read again.
const recordBatches = (
  env: Env,
  loop: Engine.Loop,
  fan: Engine.FanOut,
  batches: ReadonlyArray<Engine.Batch>,
  stopping: boolean
) =>
  Effect.gen(function* () {
    const { settings, outbox, store } = env
    if (batches.length === 0 && (!stopping || fan.stored === undefined)) return
    const { rows, carried } = Engine.recording(loop, batches, stopping)
    const now = yield* Clock.currentTimeMillis
    const leaseUntil = stopping ? 0 : now + settings.leaseMs
    const position = batches.at(-1)?.position ?? fan.stored!
    const recorded = yield* (
      rows.length === 0
        ? outbox.advance(fan.owner, position, leaseUntil)
        : outbox.advanceInserting !== undefined
          ? outbox.advanceInserting(fan.owner, position, leaseUntil, rows)
          : env.transactor.withTransaction(
              Effect.flatMap(outbox.advance(fan.owner, position, leaseUntil), (held) =>
                held ? Effect.as(store.insert(rows), true) : Effect.succeed(false)
              )
            )
    ).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.as(
              fan.recordFailing ? Effect.void : env.logWriteFailure("Fresh deliveries could not be recorded", cause),
              false
            )
      )
    )
    if (!recorded) {
      // Said once until a record succeeds, not once a retry through an outage.
      if (Engine.recordFailed(fan) && batches.length > 0) {
        yield* Effect.logWarning(
          "Fan-out gave up deliveries it had not recorded; their events are fanned out again"
        ).pipe(Effect.annotateLogs({ deliveries: rows.length }))
      }
      return
    }
    Engine.recorded(loop, fan, batches, position, leaseUntil)
    for (const outcome of carried) {
      if (outcome.completion.retryAt !== null) yield* loop.onRetry(outcome.completion.retryAt)
    }
    yield* countEndings(env, carried).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : env.logWriteFailure("Delivery endings could not be counted", cause)
      )
    )
    if (rows.some((row) => row.lease === undefined && row.outcome === undefined)) env.deliverWake.notify()
  })

const recorder = (env: Env, loop: Engine.Loop, fan: Engine.FanOut) =>
  Effect.forever(
    Effect.gen(function* () {
      const first = fan.batches[0]
      if (first === undefined) return yield* fan.ready.wait
      const now = yield* Clock.currentTimeMillis
      if (Engine.inFlight(first) > 0 && now < first.recordBy) {
        return yield* Effect.raceFirst(fan.ready.wait, Effect.sleep(first.recordBy - now))
      }
      let count = 1
      while (count < fan.batches.length && count < 8 && Engine.inFlight(fan.batches[count]!) === 0) count++
      yield* recordBatches(env, loop, fan, fan.batches.slice(0, count), false)
    })
  )

export const fanOutParts = (env: Env): FanOutParts => ({
  make: () => Engine.makeFanOut(env.settings, Random_.token()),
  recorder: (loop, fan) => recorder(env, loop, fan),
  recordAtStop: (loop, fan) => recordBatches(env, loop, fan, fan.batches.filter(Engine.isUnrecorded), true)
})
