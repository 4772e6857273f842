/**
 * The delivery engine's one writer. A delivery loop's state (`engineState.ts`) changes only
 * through the transitions here: claimed, handed off, started, attempted, recorded, written,
 * released and stopped. The transitions also decide the wake-ups. The other modules do the I/O
 * and call them; `test/engine-state.test.ts` fails when one of them writes the state. The way
 * through it: docs/internals.md (Dispatcher).
 */
import type { ClaimedDelivery, NewDelivery } from "../DeliveryStore.js"
import * as FlowControl from "../FlowControl.js"
import type { OutboxEvent } from "../OutboxReader.js"
import type { Outcome } from "./attempts.js"
import type { Batch, Blocked, FanOut, Held, Loop, Storing } from "./engineState.js"

export type { Batch, Claims, FanOut, Held, Loop } from "./engineState.js"
export { makeFanOut, makeLoop } from "./engineState.js"

// ---------------------------------------------------------------------------------------------
// Claims, lanes and runners

// Takes a claim into the loop: into its webhook's lane, and renewed while held.
const hold = (loop: Loop, held: Held): void => {
  loop.lanes.push(held.claimed.webhookId, held)
  loop.claims.live.add(held)
}

/** Starts runners for ready work while fewer than `concurrency` run. */
export const dispatch = (loop: Loop): void => {
  while (loop.runners < loop.settings.concurrency) {
    const next = loop.lanes.take()
    if (next === undefined) return
    loop.runners++
    loop.startRunner(next)
  }
}

/** A runner's next claim, or `undefined`: the runner ends, and counts no more. */
export const next = (loop: Loop): Held | undefined => {
  const held = loop.lanes.take()
  if (held === undefined) loop.runners--
  // Work that the ended attempt made ready, beyond this runner's next.
  else dispatch(loop)
  return held
}

/** What the loop asks a claim for, or why it asks none (`blocked`: results to write first; `busy`: no room). */
export const claimRequest = (
  loop: Loop
): "blocked" | "busy" | { readonly limit: number; readonly roomByWebhook: Map<string, number> } => {
  const settings = loop.settings
  if (loop.unwritten >= settings.maxUnwritten) return "blocked"
  const limit = settings.window - loop.lanes.held()
  if (limit < settings.concurrency) {
    loop.fullClaim = true
    return "busy"
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
  return { limit, roomByWebhook }
}

/**
 * Transition `claimed`: a claim's deliveries join the loop. `recordedBefore` is the last batch
 * fan-out had recorded when the claim began. Answers when to claim again, per rate-limited webhook.
 */
export const claimed = (
  loop: Loop,
  request: { readonly limit: number; readonly roomByWebhook: ReadonlyMap<string, number> },
  items: ReadonlyArray<ClaimedDelivery>,
  recordedBefore: number,
  now: number,
  leaseUntil: number
): ReadonlySet<number> => {
  const { limit, roomByWebhook } = request
  const counts = new Map<string, number>()
  for (const item of items) counts.set(item.webhookId, (counts.get(item.webhookId) ?? 0) + 1)
  // A webhook that got less than its room has nothing more in storage; one left out keeps what was known.
  const mayHaveMore = new Set<string>()
  for (const webhookId of loop.mayHaveMore) if (roomByWebhook.get(webhookId) === 0) mayHaveMore.add(webhookId)
  for (const [webhookId, count] of counts) {
    if (count >= (roomByWebhook.get(webhookId) ?? loop.settings.perWebhookWindow)) mayHaveMore.add(webhookId)
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
  loop.fullClaim = items.length >= limit
  // Per rate-limited webhook claimed, when its next slot comes inside the horizon.
  const claimAgain = new Map<string, number>()
  for (const item of items) {
    if (FlowControl.isControlled(item.target)) loop.controlled.add(item.webhookId)
    else loop.controlled.delete(item.webhookId)
    const rate = item.target.rateLimitPerSecond
    if (rate !== null) {
      const latest = FlowControl.latestStart(item)
      const at = latest === undefined ? now + FlowControl.slotMs : FlowControl.nextClaimAt(latest, rate, now)
      claimAgain.set(item.webhookId, Math.max(at, claimAgain.get(item.webhookId) ?? at))
    }
    hold(loop, { claimed: item, leaseUntil })
  }
  dispatch(loop)
  return new Set(claimAgain.values())
}

/** `held` waits for its rate-limit slot: a stop meanwhile gives it back at once (see `stopping`). */
export const waitsForSlot = (loop: Loop, held: Held): void => {
  loop.claims.waiting.add(held)
}

/**
 * Transition `started`: whether `held`'s attempt starts now. Not once the loop stops (the claim is
 * given back), nor when its lease would run out before the next renewal (lost, or renewals fail).
 */
export const started = (loop: Loop, held: Held, now: number): "start" | "stopping" | "late" => {
  const claims = loop.claims
  claims.waiting.delete(held)
  if (claims.stopping) {
    // Given back once: `stopping` gave back those waiting for their slot already.
    if (claims.live.delete(held)) claims.released.push(held)
    return "stopping"
  }
  if (now + loop.settings.renewEveryMs >= held.leaseUntil) {
    claims.live.delete(held)
    return "late"
  }
  claims.running.add(held)
  return "start"
}

/** Transition `released`: a rate-limited attempt woke after its slot and gave its claim back. */
export const missedSlot = (loop: Loop, held: Held): void => {
  loop.mayHaveMore.add(held.claimed.webhookId)
}

const count = (loop: Loop, outcome: Outcome) => {
  loop.tally.attempts++
  const status = outcome.completion.status
  if (status === "succeeded") loop.tally.succeeded++
  else if (status === "failed") loop.tally.failed++
  else loop.tally.retried++
}

// A result for the completer to write.
const record = (loop: Loop, outcome: Outcome) => {
  count(loop, outcome)
  loop.results.push(outcome)
  loop.unwritten++
  if (loop.results.length === 1) loop.kick.notify()
}

/**
 * Transition `attempted`: `held` is done with, its result (if any) kept where its batch says
 * (see `settleBatch`), and the loop woken for what this frees: a claim, fan-out's room, a
 * webhook fan-out waits for. Its runner goes on with `next`.
 */
export const attempted = (loop: Loop, held: Held, outcome: Outcome | undefined): void => {
  const where = held.batch === undefined ? "record" : settleBatch(held.batch, held.claimed.id, outcome)
  if (where === "record") {
    if (outcome !== undefined) record(loop, outcome)
  } else if (where === "ready") loop.fan?.ready.notify()
  const { settings, claims } = loop
  const webhookId = held.claimed.webhookId
  claims.live.delete(held)
  if (claims.running.delete(held) && claims.stopping) {
    claims.finishedAtStop++
    claims.ended.notify()
  }
  loop.lanes.release(webhookId)
  const inLoop = loop.lanes.held()
  // `deliverDue` claims until nothing is left. `run` claims again only where storage may hold
  // more: its fresh deliveries are handed over, and retries, slots and resends wake it themselves.
  if (
    (inLoop === 0 && loop.fan === undefined) ||
    (inLoop <= settings.concurrency && loop.fullClaim) ||
    (loop.mayHaveMore.has(webhookId) && loop.lanes.heldBy(webhookId) <= settings.perWebhookConcurrency)
  ) {
    loop.wanted.notify()
  }
  if (inLoop <= settings.window - settings.concurrency) loop.room.notify()
  const fan = loop.fan
  if (fan !== undefined) {
    const storing = fan.storing.get(webhookId)
    if (storing !== undefined) storing.ended++
    if (fan.blocked?.webhookId === webhookId) {
      fan.blocked.ended++
      if (storing === undefined && loop.lanes.heldBy(webhookId) <= fan.blocked.drainedAt) fan.drained.notify()
    }
  }
}

/** The completer's next results to write, taken off the loop. */
export const takeResults = (loop: Loop): ReadonlyArray<Outcome> => {
  const results = loop.results
  loop.results = []
  return results
}

/** A write of results failed: whether to say so (once, until one succeeds). */
export const writeFailed = (loop: Loop): boolean => {
  const first = !loop.writeFailing
  loop.writeFailing = true
  return first
}

/**
 * Transition `written`: the completer is done with `results` (written, or left to their leases).
 * Wakes the claim when a flow-controlled webhook's next delivery may be claimable now.
 */
export const written = (loop: Loop, results: ReadonlyArray<Outcome>, succeeded: boolean): void => {
  if (succeeded) loop.writeFailing = false
  loop.unwritten -= results.length
  if (results.some((item) => FlowControl.isControlled(item.claimed.target))) loop.wanted.notify()
  loop.written.notify()
  loop.room.notify()
  // Results that arrived while these were written wait for the next turn.
  if (loop.results.length > 0) loop.kick.notify()
}

/** Renewed claims' leases move on to `leaseUntil`; one not renewed (lost) keeps its old end. */
export const renewed = (loop: Loop, held: ReadonlyArray<Held>, renewedIds: ReadonlySet<string>, leaseUntil: number) => {
  for (const item of held) if (renewedIds.has(item.claimed.id)) item.leaseUntil = leaseUntil
  loop.claims.renewFailing = false
}

/** A renewal failed: whether to say so (once, until one succeeds). */
export const renewFailed = (loop: Loop): boolean => {
  const first = !loop.claims.renewFailing
  loop.claims.renewFailing = true
  return first
}

/**
 * Transition `stopping`, the first step of a stop: no attempt starts any more; the work waiting
 * for a runner or for its rate-limit slot is given back.
 */
export const stopping = (loop: Loop): void => {
  const claims = loop.claims
  claims.stopping = true
  for (const held of loop.lanes.drain()) {
    claims.live.delete(held)
    claims.released.push(held)
    if (held.batch !== undefined) settleBatch(held.batch, held.claimed.id, undefined)
  }
  // Their runners may be interrupted before the slot comes (never handed over by fan-out: no batch).
  for (const held of claims.waiting) {
    claims.live.delete(held)
    claims.released.push(held)
  }
  claims.waiting.clear()
}

/** The grace is over: the attempts still running are abandoned (released, counted as cut short). */
export const abandonRunning = (loop: Loop): void => {
  for (const held of loop.claims.running) {
    loop.claims.abandoned.push(held)
    if (held.batch !== undefined) held.batch.abandoned.add(held.claimed.id)
  }
}

// ---------------------------------------------------------------------------------------------
// Fan-out

/** Gives up what was read and not recorded; reading starts again from the stored position. */
export const batchesDropped = (fan: FanOut): void => {
  for (const batch of fan.batches) batch.state = { _tag: "Dropped" }
  fan.batches = []
  fan.position = undefined
}

/** Fan-out holds its lease until `leaseUntil`; `stored` is the position storage holds. */
export const leaseHeld = (fan: FanOut, stored: string, leaseUntil: number): void => {
  if (fan.position === undefined || stored !== fan.stored) {
    batchesDropped(fan)
    fan.position = stored
    fan.stored = stored
  }
  fan.leaseUntil = leaseUntil
}

/** A read found `events` events; `waiting`: later ones wait behind an open transaction. */
export const read = (fan: FanOut, events: number, waiting: boolean): void => {
  fan.lastRead = events
  fan.waiting = waiting
}

/** A webhook's deliveries may wait in storage: its fresh ones are stored, not handed over. */
export const mayHaveMore = (loop: Loop, webhookId: string): void => {
  loop.mayHaveMore.add(webhookId)
}

/** Fan-out starts storing `webhookId`'s fresh deliveries, measured from `now`. */
export const startStoring = (fan: FanOut, webhookId: string, now: number): void => {
  fan.storing.set(webhookId, { since: now, ended: 0, holding: false })
}

/** A storing webhook's window is measured: whether its events wait in the outbox for the next one. */
export const storingMeasured = (storing: Storing, holding: boolean, now: number): void => {
  storing.holding = holding
  storing.since = now
  storing.ended = 0
}

/** The webhook holding fan-out back kept pace: measured again from `now`. */
export const blockedMeasured = (blocked: Blocked, now: number): void => {
  blocked.since = now
  blocked.ended = 0
}

/** `webhookId` holds fan-out's next event back (or, `undefined`, none does). */
export const blockedBy = (fan: FanOut, blocked: Blocked | undefined): void => {
  if (blocked === undefined || fan.blocked?.webhookId !== blocked.webhookId) fan.blocked = blocked
}

/**
 * Transition `handed off`: the first `taken.events` events read became a batch whose deliveries
 * in `taken.held` the loop attempts before it is recorded.
 */
export const handedOff = (
  loop: Loop,
  fan: FanOut,
  events: ReadonlyArray<OutboxEvent>,
  taken: { readonly events: number; readonly deliveries: ReadonlyArray<NewDelivery>; readonly held: Array<Held> },
  now: number
): "taken" | "blocked" => {
  const settings = loop.settings
  if (taken.events > 0) {
    const batch: Batch = {
      number: ++fan.made,
      deliveries: taken.deliveries,
      position: events[taken.events - 1]!.position,
      recordBy: now + settings.recordDelayMs,
      state: { _tag: "Open", outcomes: new Map(), inFlight: taken.held.length },
      abandoned: new Set()
    }
    for (const held of taken.held) hold(loop, { ...held, batch })
    for (const delivery of taken.deliveries) {
      if (delivery.lease === undefined) fan.lastStored.set(delivery.webhookId, batch.number)
    }
    fan.batches.push(batch)
    fan.position = batch.position
    fan.ready.notify()
    dispatch(loop)
  }
  if (taken.events < events.length) {
    fan.readLimit = Math.max(16, taken.events)
    return "blocked"
  }
  fan.readLimit = Math.min(settings.fanOutBatchSize, 2 * fan.readLimit)
  return "taken"
}

/**
 * Starts recording `batches`: the rows to insert, with the results in so far, except a final
 * failure, which goes after as an update (that raises its alert). At a stop, rows without a
 * result go unleased. `carried` are the results the insert writes, counted here.
 */
export const recording = (
  loop: Loop,
  batches: ReadonlyArray<Batch>,
  stopping: boolean
): { readonly rows: Array<NewDelivery>; readonly carried: Array<Outcome> } => {
  const rows: Array<NewDelivery> = []
  const carried: Array<Outcome> = []
  for (const batch of batches) {
    const state = batch.state
    const outcomes = state._tag === "Open" || state._tag === "Writing" ? state.outcomes : new Map<string, Outcome>()
    // Results that came in during a write that did not finish go with this one.
    if (state._tag === "Writing") for (const outcome of state.after) outcomes.set(outcome.claimed.id, outcome)
    const after: Array<Outcome> = []
    for (const delivery of batch.deliveries) {
      const outcome = outcomes.get(delivery.id)
      if (outcome !== undefined && outcome.completion.status !== "failed") {
        carried.push(outcome)
        count(loop, outcome)
        const { status, retryAt, attempt, latencyMs } = outcome.completion
        rows.push({
          ...delivery,
          lease: undefined,
          dueAt: retryAt ?? delivery.dueAt,
          outcome: { status, attempt, latencyMs }
        })
      } else {
        if (outcome !== undefined) after.push(outcome)
        rows.push(
          stopping && outcome === undefined
            ? {
                ...delivery,
                lease: undefined,
                abandoned: (delivery.abandoned ?? 0) + (batch.abandoned.has(delivery.id) ? 1 : 0)
              }
            : delivery
        )
      }
    }
    batch.state = { _tag: "Writing", outcomes, after }
  }
  return { rows, carried }
}

/** Recording failed or the lease was lost: whether to say so (once, until one succeeds); read again. */
export const recordFailed = (fan: FanOut): boolean => {
  const first = !fan.recordFailing
  fan.recordFailing = true
  batchesDropped(fan)
  return first
}

/**
 * Transition `recorded`: `batches` and the position after them are stored, the lease held until
 * `leaseUntil`; the results that came in during the write go to the completer.
 */
export const recorded = (
  loop: Loop,
  fan: FanOut,
  batches: ReadonlyArray<Batch>,
  position: string,
  leaseUntil: number
): void => {
  fan.recordFailing = false
  fan.stored = position
  fan.recorded = batches.at(-1)?.number ?? fan.recorded
  fan.leaseUntil = leaseUntil
  fan.batches = fan.batches.slice(batches.length)
  for (const batch of batches) {
    const after = batch.state._tag === "Writing" ? batch.state.after : []
    batch.state = { _tag: "Written" }
    for (const outcome of after) record(loop, outcome)
  }
}

// ---------------------------------------------------------------------------------------------
// Batches

/** Open batch's attempts still running. */
export const inFlight = (batch: Batch): number => (batch.state._tag === "Open" ? batch.state.inFlight : 0)

export const isDropped = (batch: Batch): boolean => batch.state._tag === "Dropped"

export const isUnrecorded = (batch: Batch): boolean => batch.state._tag === "Open" || batch.state._tag === "Writing"

// Where an attempt's result goes: `record` it as an update, the batch is `ready` to record, or `kept`.
const settleBatch = (batch: Batch, deliveryId: string, outcome: Outcome | undefined): "record" | "ready" | "kept" => {
  const state = batch.state
  switch (state._tag) {
    case "Written":
      return "record"
    case "Open":
      if (outcome !== undefined) state.outcomes.set(deliveryId, outcome)
      return --state.inFlight === 0 ? "ready" : "kept"
    case "Writing":
      if (outcome !== undefined) state.after.push(outcome)
      return "kept"
    case "Dropped":
      return "kept"
  }
}
