/** A delivery loop (see `Loop`): claims into per-webhook lanes, workers, and the completer. */
import * as Random_ from "@waybill/core/RandomBytes"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as FlowControl from "../FlowControl.js"
import type { Outcome } from "./attempts.js"
import * as Batch from "./batch.js"
import { persist } from "./completions.js"
import * as Lanes from "./lanes.js"
import * as Leases from "./leases.js"
import type { Env, FanOut, Held, Loop } from "./loopState.js"
import * as Signal from "./signal.js"

const debugEnabled = Effect.map(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) =>
  LogLevel.lessThanEqual(minimum, LogLevel.Debug)
)

/** Hands ready work to the idle workers, one item each (a queue's size counts waiting takers as negative). */
export const dispatchIdle = (loop: Loop) => {
  for (let waiting = -Option.getOrElse(loop.idle.unsafeSize(), () => 0); waiting > 0; waiting--) {
    const next = loop.lanes.take()
    if (next === undefined) return
    loop.idle.unsafeOffer(next)
  }
}

const takeWork = (loop: Loop): Effect.Effect<Held> =>
  Effect.suspend(() => {
    const next = loop.lanes.take()
    return next !== undefined ? Effect.succeed(next) : Queue.take(loop.idle)
  })

const finish = (env: Env, loop: Loop, item: Held) => {
  const settings = env.settings
  const webhookId = item.claimed.webhookId
  Leases.end(loop.claims, item)
  loop.lanes.release(webhookId)
  const held = loop.lanes.held()
  if (
    held === 0 ||
    (held <= settings.concurrency && loop.fullClaim) ||
    (loop.mayHaveMore.has(webhookId) && loop.lanes.heldBy(webhookId) <= settings.perWebhookConcurrency)
  ) {
    loop.wanted.notify()
  }
  if (held <= settings.window - settings.concurrency) loop.room.notify()
  const fan = loop.fan
  if (fan !== undefined) {
    const storing = fan.storing.get(webhookId)
    if (storing !== undefined) storing.ended++
    if (fan.blocked?.webhookId === webhookId) {
      fan.blocked.ended++
      if (storing === undefined && loop.lanes.heldBy(webhookId) <= fan.blocked.drainedAt) {
        fan.drained.notify()
      }
    }
  }
  dispatchIdle(loop)
}

export const count = (loop: Loop, outcome: Outcome) => {
  loop.tally.attempts++
  const status = outcome.completion.status
  if (status === "succeeded") loop.tally.succeeded++
  else if (status === "failed") loop.tally.failed++
  else loop.tally.retried++
}

export const record = (loop: Loop, outcome: Outcome) => {
  count(loop, outcome)
  loop.batch.push(outcome)
  loop.unwritten++
  if (loop.batch.length === 1) loop.kick.notify()
}

// A rate-limited webhook's attempt starts no earlier than its slot; a timer that fires early sleeps again.
const untilSlot = (loop: Loop, held: Held): Effect.Effect<void> =>
  Effect.clockWith((clock) => {
    const notBefore = held.claimed.notBefore ?? 0
    const sleep = (): Effect.Effect<void> => {
      const left = notBefore - clock.unsafeCurrentTimeMillis()
      return left > 0 ? Effect.zipRight(Effect.sleep(Math.ceil(left)), Effect.suspend(sleep)) : Effect.void
    }
    if (loop.claims.stopping || clock.unsafeCurrentTimeMillis() >= notBefore) return Effect.void
    Leases.wait(loop.claims, held)
    return sleep()
  })

// Released at once, so that this loop's next claim of the webhook (or another's) gives it a later slot.
const giveBackMissed = (env: Env, loop: Loop, held: Held): Effect.Effect<undefined> =>
  Effect.gen(function* () {
    const { id: deliveryId, leaseToken, webhookId, notBefore } = held.claimed
    const now = yield* Clock.currentTimeMillis
    yield* Effect.logDebug("A rate-limited attempt woke after its slot; its claim is given back for a later one").pipe(
      Effect.annotateLogs({ deliveryId, webhookId, lateMs: now - (notBefore ?? now) })
    )
    yield* env.store
      .releaseClaims([{ deliveryId, leaseToken, abandoned: false }])
      .pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : env.logWriteFailure("A claim could not be given back; its lease runs out instead", cause)
        )
      )
    loop.mayHaveMore.add(webhookId)
    yield* loop.onRetry(now + FlowControl.slotMs)
    return undefined
  })

// An attempt starts only while its lease is renewed (see `Leases.start`); one whose lease ran out
// is left alone, and another claim takes it.
const attemptHeld = (env: Env, loop: Loop, held: Held): Effect.Effect<Outcome | undefined> =>
  Effect.clockWith((clock) => {
    switch (Leases.start(loop.claims, held, clock.unsafeCurrentTimeMillis(), env.settings.renewEveryMs)) {
      case "start":
        return Effect.flatMap(env.attemptOne(held.claimed, loop.debug), (result) =>
          result === "missedSlot" ? giveBackMissed(env, loop, held) : Effect.succeed(result)
        )
      case "stopping":
        return Effect.succeed(undefined)
      case "late":
        return Effect.as(
          Effect.logWarning("A claimed delivery's lease ran out before its attempt; it is left to another claim").pipe(
            Effect.annotateLogs({ deliveryId: held.claimed.id, webhookId: held.claimed.webhookId })
          ),
          undefined
        )
    }
  })

/** Takes a claimed delivery into the loop: into its webhook's lane, and renewed while held. */
export const hold = (loop: Loop, held: Held): void => {
  loop.lanes.push(held.claimed.webhookId, held)
  Leases.admit(loop.claims, held)
}

// Where a result goes is its batch's to say (see `batch.ts`).
const settle = (env: Env, loop: Loop, held: Held, outcome: Outcome | undefined) => {
  const where = held.batch === undefined ? "record" : Batch.settle(held.batch, held.claimed.id, outcome)
  if (where === "record") {
    if (outcome !== undefined) record(loop, outcome)
  } else if (where === "ready") loop.fan?.ready.notify()
  finish(env, loop, held)
}

const worker = (env: Env, loop: Loop) =>
  Effect.forever(
    Effect.flatMap(takeWork(loop), (held) =>
      held.batch !== undefined && Batch.isDropped(held.batch)
        ? Effect.sync(() => finish(env, loop, held))
        : Effect.map(Effect.zipRight(untilSlot(loop, held), attemptHeld(env, loop, held)), (outcome) =>
            settle(env, loop, held, outcome)
          )
    )
  )

const completer = (env: Env, loop: Loop) =>
  Effect.forever(
    Effect.gen(function* () {
      yield* loop.kick.wait
      const batch = loop.batch
      if (batch.length === 0) return
      loop.batch = []
      const size = env.settings.completionBatchSize
      for (let i = 0; i < batch.length; i += size) {
        // A failed write loses nothing: the leases run out and the deliveries are sent again.
        yield* persist(env, batch.slice(i, i + size)).pipe(
          Effect.matchCauseEffect({
            onSuccess: () =>
              Effect.sync(() => {
                loop.writeFailing = false
              }),
            onFailure: (cause) => {
              if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
              if (loop.writeFailing) return Effect.void
              loop.writeFailing = true
              return env.logWriteFailure("Delivery results could not be written; they will be retried", cause)
            }
          })
        )
      }
      loop.unwritten -= batch.length
      // A flow-controlled webhook's next delivery may be claimable now (FIFO, rate window).
      if (batch.some((item) => FlowControl.isControlled(item.claimed.target))) loop.wanted.notify()
      for (const item of batch) {
        if (item.completion.status === "pending" && item.completion.retryAt !== null) {
          yield* loop.onRetry(item.completion.retryAt)
        }
      }
      loop.written.notify()
      loop.room.notify()
      // Results that arrived while this batch was written wait for the next turn.
      if (loop.batch.length > 0) loop.kick.notify()
    })
  )

/** One claim for the loop's free room: how many it claimed, or why it did not (`blocked`, `busy`). */
export const claimFor = (env: Env, loop: Loop): Effect.Effect<number | "blocked" | "busy"> =>
  Effect.gen(function* () {
    const settings = env.settings
    if (loop.unwritten >= settings.maxUnwritten) return "blocked" as const
    const limit = settings.window - loop.lanes.held()
    if (limit < settings.concurrency) {
      loop.fullClaim = true
      return "busy" as const
    }
    const roomByWebhook = new Map<string, number>()
    for (const [webhookId, held] of loop.lanes.heldByKey()) {
      roomByWebhook.set(
        webhookId,
        // A flow-controlled webhook's claims start at once: no more than its free slots.
        loop.controlled.has(webhookId)
          ? Math.max(0, settings.perWebhookConcurrency - held)
          : held > settings.perWebhookConcurrency
            ? 0
            : settings.perWebhookWindow - held
      )
    }
    const now = yield* Clock.currentTimeMillis
    const leaseUntil = now + settings.leaseMs
    // Batches recorded from now on may be too late for the claim to see.
    const recordedBefore = loop.fan?.recorded ?? 0
    const claimed = yield* env.store.claimDue({
      now,
      limit,
      maxPerWebhook: settings.perWebhookWindow,
      maxInFlightPerWebhook: settings.perWebhookConcurrency,
      horizonMs: loop.horizonMs,
      roomByWebhook,
      leaseUntil,
      leaseToken: Random_.token()
    })
    const counts = new Map<string, number>()
    for (const item of claimed) counts.set(item.webhookId, (counts.get(item.webhookId) ?? 0) + 1)
    // A webhook that got less than its room has nothing more in storage; one left out keeps what was known.
    const mayHaveMore = new Set<string>()
    for (const webhookId of loop.mayHaveMore) if (roomByWebhook.get(webhookId) === 0) mayHaveMore.add(webhookId)
    for (const [webhookId, count] of counts) {
      if (count >= (roomByWebhook.get(webhookId) ?? settings.perWebhookWindow)) mayHaveMore.add(webhookId)
    }
    loop.mayHaveMore = mayHaveMore
    const fan = loop.fan
    if (fan !== undefined) {
      // So does one stored in a batch the claim may not have seen: its next ones must not overtake them.
      for (const [webhookId, batch] of fan.lastStored) {
        if (batch > recordedBefore) mayHaveMore.add(webhookId)
        else fan.lastStored.delete(webhookId)
      }
      for (const [webhookId, storing] of fan.storing) {
        if (mayHaveMore.has(webhookId)) continue
        fan.storing.delete(webhookId)
        // Storage caught up with the webhook fan-out held back for: its events can go on.
        if (storing.holding && fan.blocked?.webhookId === webhookId) {
          fan.blocked = undefined
          fan.drained.notify()
        }
      }
    }
    loop.fullClaim = claimed.length >= limit
    // Per rate-limited webhook claimed, when its next slot comes inside the horizon.
    const claimAgain = new Map<string, number>()
    for (const item of claimed) {
      if (FlowControl.isControlled(item.target)) loop.controlled.add(item.webhookId)
      else loop.controlled.delete(item.webhookId)
      const rate = item.target.rateLimitPerSecond
      if (rate !== null) {
        const at =
          item.notBefore === undefined ? now + FlowControl.slotMs : FlowControl.nextClaimAt(item.notBefore, rate, now)
        claimAgain.set(item.webhookId, Math.max(at, claimAgain.get(item.webhookId) ?? at))
      }
      hold(loop, { claimed: item, leaseUntil })
    }
    // Claim again then, not at the next poll: this loop keeps the webhook's rate while it has work.
    for (const at of new Set(claimAgain.values())) yield* loop.onRetry(at)
    dispatchIdle(loop)
    return claimed.length
  })

export interface FanOutParts {
  readonly make: () => FanOut
  readonly recorder: (loop: Loop, fan: FanOut) => Effect.Effect<never>
  readonly recordAtStop: (loop: Loop, fan: FanOut) => Effect.Effect<void>
}

export const makeLoop = (
  env: Env,
  wanted: Signal.Signal,
  onRetry: Loop["onRetry"],
  fanOut: FanOutParts | undefined
): Effect.Effect<Loop, never, Scope.Scope> =>
  Effect.gen(function* () {
    const settings = env.settings
    const loop: Loop = {
      lanes: Lanes.make(settings.perWebhookConcurrency),
      idle: yield* Queue.unbounded<Held>(),
      wanted,
      written: Signal.make(),
      kick: Signal.make(),
      mayHaveMore: new Set(),
      controlled: new Set(),
      // `deliverDue` attempts what may start now; `run` schedules a rate-limited webhook's attempts ahead.
      horizonMs: fanOut === undefined ? 0 : FlowControl.horizonMs,
      fullClaim: false,
      tally: { attempts: 0, succeeded: 0, retried: 0, failed: 0 },
      onRetry,
      debug: yield* debugEnabled,
      batch: [],
      unwritten: 0,
      writeFailing: false,
      room: Signal.make(),
      fan: fanOut?.make(),
      claims: Leases.make()
    }
    // At a stop, once the fibers are interrupted: record the fan-out batches (what was not
    // attempted goes unleased), write the gathered results, so those are not sent again, and
    // release the claims given back.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        const fan = loop.fan
        if (fan !== undefined && fanOut !== undefined) yield* fanOut.recordAtStop(loop, fan)
        if (loop.batch.length > 0) yield* persist(env, loop.batch)
        yield* Leases.giveBack(env, loop.claims, fan !== undefined)
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.logError("Delivery results could not be written at stop; they will be sent again", cause)
        )
      )
    )
    yield* Effect.forkScoped(completer(env, loop))
    if (loop.fan !== undefined && fanOut !== undefined) yield* Effect.forkScoped(fanOut.recorder(loop, loop.fan))
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(Effect.sleep(settings.renewEveryMs), Leases.renew(env, loop.claims)))
    )
    for (let i = 0; i < settings.concurrency; i++) yield* Effect.forkScoped(worker(env, loop))
    // Runs first at a stop (finalizers run in reverse), while the workers, the completer and the
    // renewals still run. `run` awaits its attempts up to the grace; `deliverDue`, interrupted, does not.
    const graceMs = fanOut === undefined ? 0 : settings.shutdownGraceMs
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Leases.drain(loop, now + graceMs))
    )
    return loop
  })
