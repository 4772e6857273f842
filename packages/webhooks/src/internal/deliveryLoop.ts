/**
 * A delivery loop's effects (its state and transitions: `engine.ts`): claims, runners that attempt
 * what the engine hands them, the completer that writes results, renewals and the stop.
 */
import * as Random_ from "@waybill/core/RandomBytes"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as FiberSet from "effect/FiberSet"
import * as LogLevel from "effect/LogLevel"
import type * as Scope from "effect/Scope"
import * as FlowControl from "../FlowControl.js"
import type { Outcome } from "./attempts.js"
import { persist } from "./completions.js"
import * as Engine from "./engine.js"
import type { Env } from "./env.js"
import * as Leases from "./leases.js"
import type * as Signal from "./signal.js"

const debugEnabled = Effect.map(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) =>
  LogLevel.lessThanEqual(minimum, LogLevel.Debug)
)

// A rate-limited webhook's attempt starts no earlier than its slot; a timer that fires early sleeps again.
const untilSlot = (loop: Engine.Loop, held: Engine.Held): Effect.Effect<void> =>
  Effect.clockWith((clock) => {
    const notBefore = held.claimed.notBefore ?? 0
    const sleep = (): Effect.Effect<void> => {
      const left = notBefore - clock.unsafeCurrentTimeMillis()
      return left > 0 ? Effect.zipRight(Effect.sleep(Math.ceil(left)), Effect.suspend(sleep)) : Effect.void
    }
    if (loop.claims.stopping || clock.unsafeCurrentTimeMillis() >= notBefore) return Effect.void
    Engine.waitsForSlot(loop, held)
    return sleep()
  })

// Released at once, so that this loop's next claim of the webhook (or another's) gives it a later slot.
const giveBackMissed = (env: Env, loop: Engine.Loop, held: Engine.Held): Effect.Effect<undefined> =>
  Effect.gen(function* () {
    const { id: deliveryId, leaseToken, webhookId, notBefore, startBy } = held.claimed
    const now = yield* Clock.currentTimeMillis
    yield* Effect.logDebug("A rate-limited attempt woke after its slot; its claim is given back for a later one").pipe(
      Effect.annotateLogs({
        deliveryId,
        webhookId,
        lateMs: now - (notBefore ?? now),
        heldMs: (startBy ?? now) - (notBefore ?? now)
      })
    )
    yield* env.store
      .releaseClaims([{ deliveryId, leaseToken, abandoned: false, missedSlot: true }])
      .pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : env.logWriteFailure("A claim could not be given back; its lease runs out instead", cause)
        )
      )
    Engine.missedSlot(loop, held)
    yield* loop.onRetry(now + FlowControl.slotMs)
    return undefined
  })

// An attempt starts only while its lease is renewed (see `Engine.started`); one whose lease ran out
// is left alone, and another claim takes it.
const attemptHeld = (env: Env, loop: Engine.Loop, held: Engine.Held): Effect.Effect<Outcome | undefined> =>
  Effect.clockWith((clock) => {
    switch (Engine.started(loop, held, clock.unsafeCurrentTimeMillis())) {
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

// One attempt, from its slot to its result; a claim whose batch was dropped is only let go.
const attemptAndSettle = (env: Env, loop: Engine.Loop, held: Engine.Held): Effect.Effect<void> =>
  held.batch !== undefined && Engine.isDropped(held.batch)
    ? Effect.sync(() => Engine.attempted(loop, held, undefined))
    : Effect.map(Effect.zipRight(untilSlot(loop, held), attemptHeld(env, loop, held)), (outcome) =>
        Engine.attempted(loop, held, outcome)
      )

// A runner attempts claims one after another while there is ready work for it; started by the
// engine (`Engine.dispatch`), so no fiber waits idle and none is handed its work.
const runner = (env: Env, loop: Engine.Loop, held: Engine.Held): Effect.Effect<void> =>
  Effect.flatMap(attemptAndSettle(env, loop, held), () => {
    const next = Engine.next(loop)
    return next === undefined ? Effect.void : runner(env, loop, next)
  })

const completer = (env: Env, loop: Engine.Loop) =>
  Effect.forever(
    Effect.gen(function* () {
      yield* loop.kick.wait
      const results = Engine.takeResults(loop)
      if (results.length === 0) return
      const size = env.settings.completionBatchSize
      let succeeded = true
      for (let i = 0; i < results.length; i += size) {
        // A failed write loses nothing: the leases run out and the deliveries are sent again.
        yield* persist(env, results.slice(i, i + size)).pipe(
          Effect.catchAllCause((cause) => {
            if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
            succeeded = false
            return Engine.writeFailed(loop)
              ? env.logWriteFailure("Delivery results could not be written; they will be retried", cause)
              : Effect.void
          })
        )
      }
      for (const item of results) {
        if (item.completion.status === "pending" && item.completion.retryAt !== null) {
          yield* loop.onRetry(item.completion.retryAt)
        }
      }
      Engine.written(loop, results, succeeded)
    })
  )

/** One claim for the loop's free room: how many it claimed, or why it did not (`blocked`, `busy`). */
export const claimFor = (env: Env, loop: Engine.Loop): Effect.Effect<number | "blocked" | "busy"> =>
  Effect.gen(function* () {
    const request = Engine.claimRequest(loop)
    if (typeof request === "string") return request
    const settings = env.settings
    const now = yield* Clock.currentTimeMillis
    const leaseUntil = now + settings.leaseMs
    // Batches recorded from now on may be too late for the claim to see.
    const recordedBefore = loop.fan?.recorded ?? 0
    const claimed = yield* env.store.claimDue({
      now,
      limit: request.limit,
      maxPerWebhook: settings.perWebhookWindow,
      maxInFlightPerWebhook: settings.perWebhookConcurrency,
      horizonMs: loop.horizonMs,
      roomByWebhook: request.roomByWebhook,
      leaseUntil,
      leaseToken: Random_.token()
    })
    const claimAgain = Engine.claimed(loop, request, claimed, recordedBefore, now, leaseUntil)
    // Claim again then, not at the next poll: this loop keeps the webhook's rate while it has work.
    for (const at of claimAgain) yield* loop.onRetry(at)
    return claimed.length
  })

/** How `run` makes, records and stops its fan-out (see `fanOut.ts`). */
export interface FanOutParts {
  readonly make: () => Engine.FanOut
  readonly recorder: (loop: Engine.Loop, fan: Engine.FanOut) => Effect.Effect<never>
  readonly recordAtStop: (loop: Engine.Loop, fan: Engine.FanOut) => Effect.Effect<void>
}

/** A delivery loop in the scope: its completer, recorder and renewals run until the scope closes, which stops it. */
export const makeLoop = (
  env: Env,
  wanted: Signal.Signal,
  onRetry: Engine.Loop["onRetry"],
  fanOut: FanOutParts | undefined
): Effect.Effect<Engine.Loop, never, Scope.Scope> =>
  Effect.gen(function* () {
    const settings = env.settings
    const fan = fanOut?.make()
    // At a stop, once the fibers are interrupted: record the fan-out batches (what was not
    // attempted goes unleased), write the gathered results, so those are not sent again, and
    // release the claims given back.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        if (fan !== undefined && fanOut !== undefined) yield* fanOut.recordAtStop(loop, fan)
        const results = Engine.takeResults(loop)
        if (results.length > 0) yield* persist(env, results)
        yield* Leases.giveBack(env, loop.claims, fan !== undefined)
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.logError("Delivery results could not be written at stop; they will be sent again", cause)
        )
      )
    )
    const fork = yield* FiberSet.makeRuntime<never, void, never>()
    const loop: Engine.Loop = Engine.makeLoop(settings, {
      wanted,
      onRetry,
      debug: yield* debugEnabled,
      startRunner: (held) => {
        fork(runner(env, loop, held))
      },
      fan
    })
    yield* Effect.forkScoped(completer(env, loop))
    if (fan !== undefined && fanOut !== undefined) yield* Effect.forkScoped(fanOut.recorder(loop, fan))
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(Effect.sleep(settings.renewEveryMs), Leases.renew(env, loop)))
    )
    // Runs first at a stop (finalizers run in reverse), while the runners, the completer and the
    // renewals still run. `run` awaits its attempts up to the grace; `deliverDue`, interrupted, does not.
    const graceMs = fanOut === undefined ? 0 : settings.shutdownGraceMs
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Leases.drain(loop, now + graceMs))
    )
    return loop
  })
