/**
 * A delivery loop's claims, the one writer of `Claims`: each is renewed while the loop holds it, so
 * a killed process's deliveries are taken over within one lease, and at a stop (contract §8,
 * "Shutdown") those not started are given back at once, those running awaited up to the grace.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { HeldClaim, ReleasedClaim } from "../DeliveryStore.js"
import * as Batch from "./batch.js"
import type { Claims, Env, Held, Loop } from "./loopState.js"
import * as Signal from "./signal.js"

export const make = (): Claims => ({
  live: new Set(),
  waiting: new Set(),
  running: new Set(),
  stopping: false,
  ended: Signal.make(),
  finishedAtStop: 0,
  released: [],
  abandoned: [],
  renewFailing: false
})

/** A claim taken: claimed from storage, or handed over by fan-out. */
export const admit = (claims: Claims, held: Held): void => {
  claims.live.add(held)
}

/** `held` waits for its rate-limit slot: a stop meanwhile gives it back at once (see `drain`). */
export const wait = (claims: Claims, held: Held): void => {
  claims.waiting.add(held)
}

/**
 * Whether `held`'s attempt starts now: not once the loop stops (the claim is given back), nor when
 * its lease would run out before the next renewal (it was lost, or renewals fail).
 */
export const start = (claims: Claims, held: Held, now: number, renewEveryMs: number): "start" | "stopping" | "late" => {
  claims.waiting.delete(held)
  if (claims.stopping) {
    // Given back once: `drain` gave back those waiting for their slot already.
    if (claims.live.delete(held)) claims.released.push(held)
    return "stopping"
  }
  if (now + renewEveryMs >= held.leaseUntil) {
    claims.live.delete(held)
    return "late"
  }
  claims.running.add(held)
  return "start"
}

/** `held` is done with: its attempt ended (its result waits to be written), or it was never made. */
export const end = (claims: Claims, held: Held): void => {
  claims.live.delete(held)
  if (claims.running.delete(held) && claims.stopping) {
    claims.finishedAtStop++
    claims.ended.notify()
  }
}

const heldClaim = (held: Held): HeldClaim => ({ deliveryId: held.claimed.id, leaseToken: held.claimed.leaseToken })

/** Moves every live claim's lease on by `leaseMs`; a claim not renewed (lost) keeps its old end. */
export const renew = (env: Env, claims: Claims): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (claims.live.size === 0) return
    const held = [...claims.live]
    const leaseUntil = (yield* Clock.currentTimeMillis) + env.settings.leaseMs
    const renewed = new Set(yield* env.store.renew(held.map(heldClaim), leaseUntil))
    for (const item of held) if (renewed.has(item.claimed.id)) item.leaseUntil = leaseUntil
    claims.renewFailing = false
  }).pipe(
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      // Said once until a renewal succeeds, not every third of a lease through an outage.
      if (claims.renewFailing) return Effect.void
      claims.renewFailing = true
      return env.logWriteFailure("Leases could not be renewed; attempts start again once they are", cause)
    })
  )

/**
 * The first step of a stop, while workers still run: no attempt starts any more, the work waiting
 * for a worker or for its rate-limit slot is given back, and running attempts are awaited until
 * `deadline` (then abandoned), and their results until written.
 */
export const drain = (loop: Loop, deadline: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    const claims = loop.claims
    claims.stopping = true
    for (const next of loop.lanes.drain()) {
      claims.live.delete(next)
      claims.released.push(next)
      if (next.batch !== undefined) Batch.settle(next.batch, next.claimed.id, undefined)
    }
    // Their workers may be interrupted before the slot comes (never handed over by fan-out: no batch).
    for (const waiting of claims.waiting) {
      claims.live.delete(waiting)
      claims.released.push(waiting)
    }
    claims.waiting.clear()
    const waitUntil = (done: () => boolean, signal: Signal.Signal) =>
      Effect.gen(function* () {
        while (!done()) {
          const left = deadline - (yield* Clock.currentTimeMillis)
          if (left <= 0) return
          // A stop runs in a finalizer, uninterruptible: the race's loser must be interruptible.
          yield* Effect.raceFirst(Effect.interruptible(signal.wait), Effect.interruptible(Effect.sleep(left)))
        }
      })
    yield* waitUntil(() => claims.running.size === 0, claims.ended)
    for (const held of claims.running) {
      claims.abandoned.push(held)
      if (held.batch !== undefined) Batch.abandon(held.batch, held.claimed.id)
    }
    yield* waitUntil(() => loop.unwritten === 0, loop.written)
  })

// A claim in a batch not recorded yet is written unleased with the batch; a dropped batch's is nowhere.
const stored = (held: Held) =>
  held.batch === undefined || !(Batch.isUnrecorded(held.batch) || Batch.isDropped(held.batch))

/**
 * The last step of a stop, once the workers are interrupted and the results written: the claims
 * given back and abandoned are released in storage, and one line says what the stop did.
 */
export const giveBack = (env: Env, claims: Claims, log: boolean): Effect.Effect<void> =>
  Effect.gen(function* () {
    const toRelease: Array<ReleasedClaim> = [
      ...claims.released.filter(stored).map((held) => ({ ...heldClaim(held), abandoned: false })),
      ...claims.abandoned.filter(stored).map((held) => ({ ...heldClaim(held), abandoned: true }))
    ]
    if (toRelease.length > 0) yield* env.store.releaseClaims(toRelease)
    if (!log) return
    yield* Effect.logInfo(
      `Deliveries stopped: ${claims.finishedAtStop} attempts finished while stopping, ${claims.released.length + claims.abandoned.length} deliveries released (${claims.abandoned.length} cut short)`
    ).pipe(
      Effect.annotateLogs({
        finished: claims.finishedAtStop,
        released: claims.released.length + claims.abandoned.length,
        abandoned: claims.abandoned.length
      })
    )
  })
