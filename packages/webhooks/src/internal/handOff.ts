/**
 * Hand-off: which fresh deliveries `run` sends itself before recording them, and which it stores
 * for a claim. The rules and why: docs/webhooks.md (Claims, leases, fairness).
 */
import * as Random_ from "@waybill/core/RandomBytes"
import { claimedOf, type NewDelivery } from "../DeliveryStore.js"
import { isControlled } from "../FlowControl.js"
import type { OutboxEvent } from "../OutboxReader.js"
import * as Engine from "./engine.js"
import type { Settings } from "./settings.js"

// Whether `full`, holding the next event back, is stored now: when slow or in someone's way.
const storeAround = (
  settings: Settings,
  loop: Engine.Loop,
  fan: Engine.FanOut,
  full: string,
  deliveries: ReadonlyArray<NewDelivery>,
  after: number,
  now: number
): boolean => {
  const blocked = fan.blocked
  if (blocked?.webhookId !== full || now - blocked.since < settings.recordDelayMs) return false
  if (blocked.ended < settings.perWebhookConcurrency || waitsBehind(settings, loop, full, deliveries, after)) {
    Engine.startStoring(fan, full, now)
    return true
  }
  Engine.blockedMeasured(blocked, now)
  return false
}

// A stored webhook keeping pace again has its events wait in the outbox until claims catch up.
const holdsBack = (
  settings: Settings,
  loop: Engine.Loop,
  fan: Engine.FanOut,
  webhookId: string,
  deliveries: ReadonlyArray<NewDelivery>,
  after: number,
  now: number
): boolean => {
  const storing = fan.storing.get(webhookId)
  if (storing === undefined) {
    Engine.startStoring(fan, webhookId, now)
    return false
  }
  if (now - storing.since < settings.recordDelayMs) return storing.holding
  Engine.storingMeasured(
    storing,
    storing.ended >= settings.perWebhookConcurrency && !waitsBehind(settings, loop, webhookId, deliveries, after),
    now
  )
  return storing.holding
}

const waitsBehind = (
  settings: Settings,
  loop: Engine.Loop,
  webhookId: string,
  deliveries: ReadonlyArray<NewDelivery>,
  after: number
): boolean => {
  for (let i = after; i < deliveries.length; i++) {
    const other = deliveries[i]!.webhookId
    if (other !== webhookId && !loop.mayHaveMore.has(other) && loop.lanes.heldBy(other) < settings.perWebhookWindow) {
      return true
    }
  }
  return false
}

/**
 * Takes events from the front of a batch while their deliveries fit in the loop; one that does not
 * fit waits in the outbox, and a webhook with deliveries in storage gets none, so each order holds.
 */
export const handOff = (
  settings: Settings,
  loop: Engine.Loop,
  fan: Engine.FanOut,
  events: ReadonlyArray<OutboxEvent>,
  deliveries: Array<NewDelivery>,
  now: number
) => {
  const lease = { until: now + settings.leaseMs, token: Random_.token() }
  const held: Array<Engine.Held> = []
  let room = settings.window - loop.lanes.held()
  let next = 0
  let taken = 0
  let cutBy: string | undefined
  const pending = new Map<string, number>()
  for (; taken < events.length; taken++) {
    const eventId = events[taken]!.id
    let end = next
    while (end < deliveries.length && deliveries[end]!.eventId === eventId) end++
    let need = 0
    let full: string | undefined
    let heldBack: string | undefined
    for (let i = next; i < end; i++) {
      // Flow-controlled deliveries are stored and claimed, never handed over.
      if (isControlled(deliveries[i]!.target)) continue
      const webhookId = deliveries[i]!.webhookId
      if (loop.mayHaveMore.has(webhookId)) {
        if (heldBack === undefined && holdsBack(settings, loop, fan, webhookId, deliveries, end, now))
          heldBack = webhookId
        continue
      }
      need++
      const count = (pending.get(webhookId) ?? 0) + 1
      pending.set(webhookId, count)
      const holding = loop.lanes.heldBy(webhookId) + count
      // Beyond its share only while the loop keeps `concurrency` free for the others.
      if (
        full === undefined &&
        holding > settings.perWebhookWindow &&
        (holding > settings.handOffWindow || room - need < settings.concurrency)
      ) {
        full = webhookId
      }
    }
    if (heldBack !== undefined) {
      cutBy = heldBack
      break
    }
    if (full !== undefined || need > room) {
      if (full !== undefined && storeAround(settings, loop, fan, full, deliveries, end, now)) {
        Engine.mayHaveMore(loop, full)
        Engine.blockedBy(fan, undefined)
      } else if (taken > 0 || full !== undefined) {
        cutBy = full
        break
      } else {
        // More deliveries than the whole loop has room for: store them.
        for (let i = next; i < end; i++) Engine.mayHaveMore(loop, deliveries[i]!.webhookId)
      }
    }
    for (let i = next; i < end; i++) {
      const delivery = deliveries[i]!
      if (isControlled(delivery.target)) continue
      const webhookId = delivery.webhookId
      if (loop.mayHaveMore.has(webhookId) || room <= 0) {
        Engine.mayHaveMore(loop, webhookId)
        continue
      }
      room--
      deliveries[i] = { ...delivery, lease }
      held.push({
        claimed: claimedOf(delivery, {
          attempts: 0,
          cycleStart: 0,
          trigger: "automatic",
          leaseToken: lease.token,
          target: delivery.target
        }),
        leaseUntil: lease.until
      })
    }
    next = end
  }
  Engine.blockedBy(
    fan,
    cutBy === undefined
      ? undefined
      : {
          webhookId: cutBy,
          since: now,
          ended: 0,
          drainedAt: Math.max(settings.perWebhookConcurrency, loop.lanes.heldBy(cutBy) >> 1)
        }
  )
  return { events: taken, deliveries: deliveries.slice(0, next), held }
}
