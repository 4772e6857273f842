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
import type { NewDelivery } from "../DeliveryStore.js"
import type { Outcome } from "./attempts.js"
import * as Batch from "./batch.js"
import { countEndings } from "./completions.js"
import { count, dispatchIdle, type FanOutParts, hold, record } from "./deliveryLoop.js"
import { handOff } from "./handOff.js"
import { traceFanOut } from "./instrument.js"
import type { Env, FanOut, Loop } from "./loopState.js"
import * as Signal from "./signal.js"

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
        const { events } = yield* outbox.read(position.value, settings.fanOutBatchSize)
        const deliveries = events.length === 0 ? [] : yield* env.matcher.deliveriesOf(events, now)
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

/** Gives up what was read and not recorded; reading starts again from the stored position. */
const dropBatches = (fan: FanOut) => {
  for (const batch of fan.batches) Batch.drop(batch)
  fan.batches = []
  fan.position = undefined
}

/**
 * One step of `run`'s fan-out: reads as many events as the loop has room for and hands their
 * deliveries over; "blocked" when an event waits for its webhook's share of the loop.
 */
export const fanOutStep = (env: Env, loop: Loop, fan: FanOut): Effect.Effect<"more" | "idle" | "full" | "blocked"> =>
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
        dropBatches(fan)
        return "idle" as const
      }
      if (fan.position === undefined || stored.value !== fan.stored) {
        dropBatches(fan)
        fan.position = stored.value
        fan.stored = stored.value
      }
      fan.leaseUntil = leaseUntil
    }
    // Held back long enough: read a whole batch, to see whether another webhook waits behind it.
    const lookAhead = fan.blocked !== undefined && now - fan.blocked.since >= settings.recordDelayMs
    const limit = lookAhead ? settings.fanOutBatchSize : Math.min(fan.readLimit, room)
    const { events, waiting } = yield* outbox.read(fan.position!, limit)
    fan.lastRead = events.length
    fan.waiting = waiting
    if (events.length === 0) return "idle" as const
    const deliveries = yield* env.matcher.deliveriesOf(events, now)
    yield* traceFanOut(events, deliveries, BigInt(now) * 1_000_000n)
    const taken = handOff(settings, loop, fan, events, deliveries, now)
    if (taken.events > 0) {
      const batch = Batch.open(
        ++fan.made,
        taken.deliveries,
        events[taken.events - 1]!.position,
        taken.held.length,
        now + settings.recordDelayMs
      )
      for (const held of taken.held) hold(loop, { ...held, batch })
      for (const delivery of taken.deliveries) {
        if (delivery.lease === undefined) fan.lastStored.set(delivery.webhookId, batch.number)
      }
      fan.batches.push(batch)
      fan.position = batch.position
      fan.ready.notify()
      dispatchIdle(loop)
    }
    if (taken.events < events.length) {
      fan.readLimit = Math.max(16, taken.events)
      return "blocked" as const
    }
    fan.readLimit = Math.min(settings.fanOutBatchSize, 2 * fan.readLimit)
    return events.length < limit ? ("idle" as const) : ("more" as const)
  }).pipe(Tracing.withSpan("Dispatcher.fanOut", { captureStackTrace: false }))

// Inserts and moves the position in one transaction, only while this loop holds the fan-out
// lease; on failure everything read and not recorded is given up and read again.
const recordBatches = (env: Env, loop: Loop, fan: FanOut, batches: ReadonlyArray<Batch.Batch>, stopping: boolean) =>
  Effect.gen(function* () {
    const { settings, outbox, store } = env
    if (batches.length === 0 && (!stopping || fan.stored === undefined)) return
    const rows: Array<NewDelivery> = []
    const retries: Array<number> = []
    const carried: Array<Outcome> = []
    for (const batch of batches) {
      const write = Batch.startWriting(batch, stopping)
      rows.push(...write.rows)
      carried.push(...write.carried)
      for (const outcome of write.carried) {
        count(loop, outcome)
        if (outcome.completion.retryAt !== null) retries.push(outcome.completion.retryAt)
      }
    }
    const now = yield* Clock.currentTimeMillis
    const leaseUntil = stopping ? 0 : now + settings.leaseMs
    const position = batches.at(-1)?.position ?? fan.stored!
    const advance = outbox.advance(fan.owner, position, leaseUntil)
    const recorded = yield* (
      rows.length === 0
        ? advance
        : env.transactor.withTransaction(
            Effect.flatMap(advance, (held) => (held ? Effect.as(store.insert(rows), true) : Effect.succeed(false)))
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
      const firstFailure = !fan.recordFailing
      fan.recordFailing = true
      if (firstFailure && batches.length > 0) {
        yield* Effect.logWarning(
          "Fan-out gave up deliveries it had not recorded; their events are fanned out again"
        ).pipe(Effect.annotateLogs({ deliveries: rows.length }))
      }
      dropBatches(fan)
      return
    }
    fan.recordFailing = false
    fan.stored = position
    fan.recorded = batches.at(-1)?.number ?? fan.recorded
    fan.leaseUntil = leaseUntil
    fan.batches = fan.batches.slice(batches.length)
    for (const batch of batches) for (const outcome of Batch.written(batch)) record(loop, outcome)
    for (const retryAt of retries) yield* loop.onRetry(retryAt)
    yield* countEndings(env, carried).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : env.logWriteFailure("Delivery endings could not be counted", cause)
      )
    )
    if (rows.some((row) => row.lease === undefined && row.outcome === undefined)) env.deliverWake.notify()
  })

const recorder = (env: Env, loop: Loop, fan: FanOut) =>
  Effect.forever(
    Effect.gen(function* () {
      const first = fan.batches[0]
      if (first === undefined) return yield* fan.ready.wait
      const now = yield* Clock.currentTimeMillis
      if (Batch.inFlight(first) > 0 && now < first.recordBy) {
        return yield* Effect.raceFirst(fan.ready.wait, Effect.sleep(first.recordBy - now))
      }
      let count = 1
      while (count < fan.batches.length && count < 8 && Batch.inFlight(fan.batches[count]!) === 0) count++
      yield* recordBatches(env, loop, fan, fan.batches.slice(0, count), false)
    })
  )

export const fanOutParts = (env: Env): FanOutParts => ({
  make: () => ({
    owner: Random_.token(),
    position: undefined,
    stored: undefined,
    leaseUntil: 0,
    batches: [],
    ready: Signal.make(),
    readLimit: env.settings.fanOutBatchSize,
    lastRead: 0,
    waiting: false,
    blocked: undefined,
    drained: Signal.make(),
    storing: new Map(),
    made: 0,
    recorded: 0,
    lastStored: new Map(),
    recordFailing: false
  }),
  recorder: (loop, fan) => recorder(env, loop, fan),
  recordAtStop: (loop, fan) => recordBatches(env, loop, fan, fan.batches.filter(Batch.isUnrecorded), true)
})
