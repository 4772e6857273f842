/**
 * A delivery loop's leases: each claim is renewed while the loop holds it, so a killed process's
 * deliveries are taken over within one lease, and at a stop (contract §8, "Shutdown") those not
 * started are given back at once, those running awaited up to the grace.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { HeldClaim, ReleasedClaim } from "../DeliveryStore.js"
import * as Engine from "./engine.js"
import type { Env } from "./env.js"
import type * as Signal from "./signal.js"

const heldClaim = (held: Engine.Held): HeldClaim => ({
  deliveryId: held.claimed.id,
  leaseToken: held.claimed.leaseToken
})

/** Moves every live claim's lease on by `leaseMs`; a claim not renewed (lost) keeps its old end. */
export const renew = (env: Env, loop: Engine.Loop): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (loop.claims.live.size === 0) return
    const held = [...loop.claims.live]
    const leaseUntil = (yield* Clock.currentTimeMillis) + env.settings.leaseMs
    const renewed = new Set(yield* env.store.renew(held.map(heldClaim), leaseUntil))
    Engine.renewed(loop, held, renewed, leaseUntil)
  }).pipe(
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      // Said once until a renewal succeeds, not every third of a lease through an outage.
      return Engine.renewFailed(loop)
        ? env.logWriteFailure("Leases could not be renewed; attempts start again once they are", cause)
        : Effect.void
    })
  )

/**
 * The first step of a stop, while runners still run: no attempt starts any more, the work waiting
 * for a runner or for its rate-limit slot is given back, and running attempts are awaited until
 * `deadline` (then abandoned), and their results until written.
 */
export const drain = (loop: Engine.Loop, deadline: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    Engine.stopping(loop)
    const waitUntil = (done: () => boolean, signal: Signal.Signal) =>
      Effect.gen(function* () {
        while (!done()) {
          const left = deadline - (yield* Clock.currentTimeMillis)
          if (left <= 0) return
          // A stop runs in a finalizer, uninterruptible: the race's loser must be interruptible.
          yield* Effect.raceFirst(Effect.interruptible(signal.wait), Effect.interruptible(Effect.sleep(left)))
        }
      })
    yield* waitUntil(() => loop.claims.running.size === 0, loop.claims.ended)
    Engine.abandonRunning(loop)
    yield* waitUntil(() => loop.unwritten === 0, loop.written)
  })

// A claim in a batch not recorded yet is written unleased with the batch; a dropped batch's is nowhere.
const stored = (held: Engine.Held) =>
  held.batch === undefined || !(Engine.isUnrecorded(held.batch) || Engine.isDropped(held.batch))

/**
 * The last step of a stop, once the runners are interrupted and the results written: the claims
 * given back and abandoned are released in storage, and one line says what the stop did.
 */
export const giveBack = (env: Env, claims: Engine.Claims, log: boolean): Effect.Effect<void> =>
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
