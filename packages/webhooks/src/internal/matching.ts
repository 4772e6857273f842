/** Fan-out's matching: one delivery per subscribed webhook of the event's workspace whose filter matches. */
import * as Id from "@waybill/core/Id"
import { type EventType, isEventType } from "@waybill/events/EventType"
import { guardedRoots } from "@waybill/events/FilterFields"
import { compileFilterEither, type Predicate } from "@waybill/filters/Filter"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { NewDelivery } from "../DeliveryStore.js"
import type { OutboxEvent } from "../OutboxReader.js"
import { targetOf, type Webhook } from "../Webhook.js"
import type { WebhookRepository } from "../WebhookRepository.js"

const failClosed: Predicate = () => false
const NOT_PARSED: unique symbol = Symbol("not parsed")
const UNPARSABLE: unique symbol = Symbol("unparsable")

// What fan-out found worth a log line; logged after the batch, outside the hot loop.
type Problem = { readonly message: string; readonly annotations: Record<string, string> }

const payloadOf = (event: OutboxEvent): unknown => {
  try {
    const envelope: unknown = JSON.parse(event.body)
    return typeof envelope === "object" && envelope !== null && "payload" in envelope ? envelope.payload : UNPARSABLE
  } catch {
    return UNPARSABLE
  }
}

export interface Matcher {
  /** `webhooksVersion` (see `OutboxRead`): the subscribers read for it before are matched against again. */
  readonly deliveriesOf: (
    events: ReadonlyArray<OutboxEvent>,
    now: number,
    webhooksVersion?: string | undefined
  ) => Effect.Effect<Array<NewDelivery>>
}

export const makeMatcher = (repository: WebhookRepository["Type"]): Matcher => {
  // Keyed by revision, so an edited webhook is compiled afresh; cleared past a bound, as deleted
  // webhooks leave entries behind.
  const compiled = new Map<string, { readonly revision: number; readonly byType: Map<string, Predicate> }>()

  const predicateFor = (webhook: Webhook, eventType: EventType, problems: Array<Problem>): Predicate | undefined => {
    const filter = webhook.filters[eventType]
    if (filter === undefined) return undefined
    let entry = compiled.get(webhook.id)
    if (entry !== undefined && entry.revision !== webhook.revision) entry = undefined
    const cached = entry?.byType.get(eventType)
    if (cached !== undefined) return cached
    const result = compileFilterEither(filter, { guardedRoots: guardedRoots(eventType) })
    const predicate = Either.getOrElse(result, () => failClosed)
    if (entry === undefined) {
      if (compiled.size >= 10_000) compiled.clear()
      entry = { revision: webhook.revision, byType: new Map() }
      compiled.set(webhook.id, entry)
    }
    entry.byType.set(eventType, predicate)
    if (Either.isLeft(result)) {
      problems.push({
        message: "A stored webhook filter cannot be evaluated; it matches nothing",
        annotations: {
          webhookId: webhook.id,
          eventType,
          issues: result.left.map((issue) => `${issue.path}: ${issue.message}`).join("; ")
        }
      })
    }
    return predicate
  }

  // Per webhook, the key its delivery ids are derived with; bounded like `compiled`.
  const deliveryKeys = new Map<string, Uint8Array>()
  const deliveryKey = (webhookId: string): Uint8Array => {
    let key = deliveryKeys.get(webhookId)
    if (key === undefined) {
      if (deliveryKeys.size >= 10_000) deliveryKeys.clear()
      key = Id.deriveKey(webhookId)
      deliveryKeys.set(webhookId, key)
    }
    return key
  }

  const deliveriesFor = (
    event: OutboxEvent,
    eventType: EventType,
    webhooks: ReadonlyArray<Webhook>,
    now: number,
    out: Array<NewDelivery>,
    problems: Array<Problem>
  ): void => {
    // Parsed at most once per event, and only if some webhook filters it.
    let payload: unknown = NOT_PARSED
    for (const webhook of webhooks) {
      const predicate = predicateFor(webhook, eventType, problems)
      if (predicate !== undefined) {
        if (payload === NOT_PARSED) {
          payload = payloadOf(event)
          if (payload === UNPARSABLE) {
            problems.push({
              message: "An outbox event body is not a delivery envelope; filters match nothing",
              annotations: { eventId: event.id, eventType }
            })
          }
        }
        let matches = false
        if (payload !== UNPARSABLE) {
          try {
            matches = predicate(payload)
          } catch {
            matches = false
          }
        }
        if (!matches) continue
      }
      out.push({
        // Derived, so an event fanned out again after a crash keeps its delivery ids.
        id: Id.derive("dlv", event.id, deliveryKey(webhook.id)),
        workspaceId: event.workspaceId,
        webhookId: webhook.id,
        eventId: event.id,
        eventType,
        eventCreatedAt: event.createdAt,
        createdAt: Math.floor(now / 1000),
        dueAt: now,
        body: event.body,
        target: targetOf(webhook),
        traceparent: event.traceparent,
        orderingKey: event.orderingKey ?? null
      })
    }
  }

  // Subscribers per workspace and event type, kept while the webhooks' version stays; bounded
  // like `compiled`. A store without a version gets a fresh map per batch.
  let kept: { readonly version: string; readonly subscribers: Map<string, ReadonlyArray<Webhook>> } | undefined
  const subscribersFor = (version: string | undefined) => {
    if (version === undefined) return new Map<string, ReadonlyArray<Webhook>>()
    if (kept?.version !== version || kept.subscribers.size >= 10_000) kept = { version, subscribers: new Map() }
    return kept.subscribers
  }

  const deliveriesOf = (events: ReadonlyArray<OutboxEvent>, now: number, webhooksVersion?: string) =>
    Effect.gen(function* () {
      const subscribers = subscribersFor(webhooksVersion)
      const deliveries: Array<NewDelivery> = []
      const problems: Array<Problem> = []
      for (const event of events) {
        const eventType = event.type
        if (!isEventType(eventType)) {
          problems.push({
            message: "An outbox event has a type outside the catalogue; nobody receives it",
            annotations: { eventId: event.id, eventType }
          })
          continue
        }
        const key = `${event.workspaceId}\u0000${eventType}`
        let webhooks = subscribers.get(key)
        if (webhooks === undefined) {
          webhooks = yield* repository.subscribed(event.workspaceId, eventType)
          subscribers.set(key, webhooks)
        }
        if (webhooks.length > 0) deliveriesFor(event, eventType, webhooks, now, deliveries, problems)
      }
      for (const problem of problems) {
        yield* Effect.logError(problem.message).pipe(Effect.annotateLogs(problem.annotations))
      }
      return deliveries
    })

  return { deliveriesOf }
}
