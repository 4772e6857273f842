/**
 * The dispatcher (contract §5): turns recorded events into deliveries and delivers them.
 *
 * - **Fan-out** claims events from the outbox and, in the same transaction, writes one delivery
 *   per subscribed webhook of the event's workspace whose filter matches, then marks the events
 *   fanned out. Each event's body is parsed once (only if some filter needs it); compiled
 *   filters are cached per webhook (webhooks never change). A filtered-out event leaves nothing.
 * - **Delivery** claims due deliveries under a lease and attempts them with bounded concurrency
 *   and a per-webhook cap (a busy webhook is left out of claims), so one slow receiver cannot
 *   occupy every slot. Each attempt POSTs the stored body unchanged with the contract's headers
 *   and authentication (HMAC signed afresh per attempt). A 2xx succeeds; anything else is
 *   retried exactly once, no sooner than the retry delay (plus up to 20 % jitter); a second
 *   failure marks the delivery failed and raises a failure alert in the same transaction.
 *   Completions are written in batches.
 *
 * Delivery is at-least-once: a dispatcher that dies mid-attempt leaves a lease that expires,
 * and the delivery is sent again with the same `X-Delivery-Id`.
 *
 * @since 0.1.0
 */
import * as Id from "@waybill/core/Id"
import { Transactor } from "@waybill/core/Transactor"
import { type EventType, isEventType } from "@waybill/events/EventType"
import { guardedRoots } from "@waybill/events/FilterFields"
import { compileFilterEither, type Predicate } from "@waybill/filters/Filter"
import { basicAuthorization, bearerAuthorization } from "@waybill/signing/Authorization"
import { signatureHeaders } from "@waybill/signing/Hmac"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import { type Attempt, type ErrorClass, isSuccess, maxAttempts } from "./Delivery.js"
import { type ClaimedDelivery, type Completion, DeliveryStore, type NewDelivery } from "./DeliveryStore.js"
import { type FailureAlert, FailureAlerts } from "./FailureAlerts.js"
import { HttpSender, SendError } from "./HttpSender.js"
import { type OutboxEvent, OutboxReader } from "./OutboxReader.js"
import { SecretBox, type SecretBoxError } from "./SecretBox.js"
import { type OpenAuth, type SealedAuth, secretContext, type Webhook } from "./Webhook.js"
import { WebhookRepository } from "./WebhookRepository.js"

/**
 * Dispatcher settings; every one has a default.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** One attempt's deadline (DNS, connect, request, response headers). Default 20 000 ms. */
  readonly timeoutMs?: number | undefined
  /** The delay before the one retry; never shorter. Default 10 000 ms. */
  readonly retryDelayMs?: number | undefined
  /** The retry waits up to this fraction longer than `retryDelayMs`. Default 0.2. */
  readonly retryJitter?: number | undefined
  /** Attempts in flight at once, over all webhooks. Default 64. */
  readonly concurrency?: number | undefined
  /** Attempts in flight at once to one webhook (a claim leaves busier ones out). Default 8. */
  readonly perWebhookConcurrency?: number | undefined
  /** How long a claim holds a delivery; at least `timeoutMs` + 5 s. Default `timeoutMs` + 30 s. */
  readonly leaseMs?: number | undefined
  /** How often `run` looks for work when nobody wakes it. Default 1 000 ms. */
  readonly pollIntervalMs?: number | undefined
  /** Events per fan-out transaction. Default 256. */
  readonly fanOutBatchSize?: number | undefined
  /** Completions per write. Default 256. */
  readonly completionBatchSize?: number | undefined
}

/**
 * What one fan-out did.
 *
 * @since 0.1.0
 * @category models
 */
export interface FanOutSummary {
  readonly events: number
  readonly deliveries: number
}

/**
 * What `deliverDue` did: attempts made, and how they ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeliverySummary {
  readonly attempts: number
  readonly succeeded: number
  readonly retried: number
  readonly failed: number
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Dispatcher extends Context.Tag("@waybill/webhooks/Dispatcher")<
  Dispatcher,
  {
    /** Fans out one batch of pending events, in one transaction. */
    readonly fanOut: Effect.Effect<FanOutSummary>
    /** Fans out until no event is pending. */
    readonly fanOutAll: Effect.Effect<FanOutSummary>
    /** Attempts every delivery due now and returns when none is due or in flight. */
    readonly deliverDue: Effect.Effect<DeliverySummary>
    /** Fan-out and delivery as two loops, until interrupted; they poll, and `wake` hurries them. */
    readonly run: Effect.Effect<never>
    /** Wakes `run` at once (after publishing, or on a database notification). */
    readonly wake: Effect.Effect<void>
  }
>() {}

interface Settings {
  readonly timeoutMs: number
  readonly retryDelayMs: number
  readonly retryJitter: number
  readonly concurrency: number
  readonly perWebhookConcurrency: number
  readonly leaseMs: number
  readonly pollIntervalMs: number
  readonly fanOutBatchSize: number
  readonly completionBatchSize: number
}

const positive = (value: number | undefined, fallback: number) =>
  value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback

const settingsOf = (options: Options): Settings => {
  const timeoutMs = positive(options.timeoutMs, 20_000)
  const concurrency = Math.floor(positive(options.concurrency, 64))
  return {
    timeoutMs,
    retryDelayMs: positive(options.retryDelayMs, 10_000),
    retryJitter: Math.min(0.2, Math.max(0, options.retryJitter ?? 0.2)),
    concurrency,
    perWebhookConcurrency: Math.min(concurrency, Math.floor(positive(options.perWebhookConcurrency, 8))),
    // A lease shorter than an attempt would let a second dispatcher send while the first waits.
    leaseMs: Math.max(positive(options.leaseMs, timeoutMs + 30_000), timeoutMs + 5_000),
    pollIntervalMs: positive(options.pollIntervalMs, 1_000),
    fanOutBatchSize: Math.floor(positive(options.fanOutBatchSize, 256)),
    completionBatchSize: Math.floor(positive(options.completionBatchSize, 256))
  }
}

const failClosed: Predicate = () => false
const NOT_PARSED: unique symbol = Symbol("not parsed")
const UNPARSABLE: unique symbol = Symbol("unparsable")

const randomToken = (): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  let hex = ""
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0")
  return hex
}

// A completed attempt waiting to be written, and the fiber waiting for that.
interface Finished {
  readonly claimed: ClaimedDelivery
  readonly completion: Completion
  readonly detail: string
  readonly written: Deferred.Deferred<void>
}

interface Tally {
  attempts: number
  succeeded: number
  retried: number
  failed: number
}

const describeFailure = (statusCode: number | null, error: SendError | undefined): string =>
  statusCode !== null ? `HTTP ${statusCode}` : `${error?.reason ?? "error"}: ${(error?.message ?? "").slice(0, 200)}`

/**
 * Builds a dispatcher from its ports.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const settings = settingsOf(options)
    const outbox = yield* OutboxReader
    const repository = yield* WebhookRepository
    const store = yield* DeliveryStore
    const alerts = yield* FailureAlerts
    const secretBox = yield* SecretBox
    const sender = yield* HttpSender
    const transactor = yield* Transactor

    const fanOutWake = yield* Queue.sliding<void>(1)
    const deliverWake = yield* Queue.sliding<void>(1)
    const wake = Effect.zipRight(Queue.offer(fanOutWake, undefined), Queue.offer(deliverWake, undefined))

    // ---------------------------------------------------------------------------------------
    // Fan-out
    // ---------------------------------------------------------------------------------------

    // webhook id → event type → predicate. Webhooks never change, so entries never go stale;
    // the map is cleared when it grows past a bound, as deleted webhooks leave entries behind.
    const compiled = new Map<string, Map<string, Predicate>>()
    const predicateFor = (webhook: Webhook, eventType: EventType): Effect.Effect<Predicate | undefined> => {
      const filter = webhook.filters[eventType]
      if (filter === undefined) return Effect.succeed(undefined)
      const cached = compiled.get(webhook.id)?.get(eventType)
      if (cached !== undefined) return Effect.succeed(cached)
      const result = compileFilterEither(filter, { guardedRoots: guardedRoots(eventType) })
      const predicate = Either.getOrElse(result, () => failClosed)
      if (compiled.size >= 10_000) compiled.clear()
      let byType = compiled.get(webhook.id)
      if (byType === undefined) {
        byType = new Map()
        compiled.set(webhook.id, byType)
      }
      byType.set(eventType, predicate)
      return Either.isLeft(result)
        ? Effect.as(
            Effect.logWarning("A stored webhook filter cannot be evaluated; it matches nothing").pipe(
              Effect.annotateLogs({
                webhookId: webhook.id,
                eventType,
                issues: result.left.map((issue) => `${issue.path}: ${issue.message}`).join("; ")
              })
            ),
            predicate
          )
        : Effect.succeed(predicate)
    }

    const deliveriesFor = (
      event: OutboxEvent,
      eventType: EventType,
      webhooks: ReadonlyArray<Webhook>,
      now: number
    ): Effect.Effect<ReadonlyArray<NewDelivery>> =>
      Effect.gen(function* () {
        let payload: unknown = NOT_PARSED
        const out: Array<NewDelivery> = []
        for (const webhook of webhooks) {
          const predicate = yield* predicateFor(webhook, eventType)
          if (predicate !== undefined) {
            if (payload === NOT_PARSED) {
              try {
                const envelope: unknown = JSON.parse(event.body)
                payload =
                  typeof envelope === "object" && envelope !== null && "payload" in envelope
                    ? envelope.payload
                    : UNPARSABLE
              } catch {
                payload = UNPARSABLE
              }
              if (payload === UNPARSABLE) {
                yield* Effect.logError("An outbox event body is not a delivery envelope; filters match nothing").pipe(
                  Effect.annotateLogs({ eventId: event.id, eventType })
                )
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
            id: Id.format("dlv", now, crypto.getRandomValues(new Uint8Array(10))),
            workspaceId: event.workspaceId,
            webhookId: webhook.id,
            eventId: event.id,
            eventType,
            createdAt: Math.floor(now / 1000),
            dueAt: now,
            body: event.body,
            target: { webhookId: webhook.id, url: webhook.url, auth: webhook.auth }
          })
        }
        return out
      })

    const fanOut: Effect.Effect<FanOutSummary> = Effect.gen(function* () {
      const result = yield* transactor.withTransaction(
        Effect.gen(function* () {
          const events = yield* outbox.claimPending(settings.fanOutBatchSize)
          if (events.length === 0) return { events: 0, deliveries: 0 }
          const now = yield* Clock.currentTimeMillis
          const subscribers = new Map<string, ReadonlyArray<Webhook>>()
          const deliveries: Array<NewDelivery> = []
          for (const event of events) {
            const eventType = event.type
            if (!isEventType(eventType)) {
              yield* Effect.logError("An outbox event has a type outside the catalogue; nobody receives it").pipe(
                Effect.annotateLogs({ eventId: event.id, eventType })
              )
              continue
            }
            const key = `${event.workspaceId}\u0000${eventType}`
            let webhooks = subscribers.get(key)
            if (webhooks === undefined) {
              webhooks = yield* repository.subscribed(event.workspaceId, eventType)
              subscribers.set(key, webhooks)
            }
            if (webhooks.length > 0) deliveries.push(...(yield* deliveriesFor(event, eventType, webhooks, now)))
          }
          if (deliveries.length > 0) yield* store.insert(deliveries)
          yield* outbox.markFannedOut(
            events.map((event) => event.id),
            Math.floor(now / 1000)
          )
          return { events: events.length, deliveries: deliveries.length }
        })
      )
      if (result.deliveries > 0) yield* Queue.offer(deliverWake, undefined)
      return result
    }).pipe(Effect.withSpan("Dispatcher.fanOut"))

    const fanOutAll: Effect.Effect<FanOutSummary> = Effect.gen(function* () {
      let events = 0
      let deliveries = 0
      while (true) {
        const batch = yield* fanOut
        events += batch.events
        deliveries += batch.deliveries
        if (batch.events < settings.fanOutBatchSize) return { events, deliveries }
      }
    })

    // ---------------------------------------------------------------------------------------
    // Delivery
    // ---------------------------------------------------------------------------------------

    const openAuth = (target: { readonly webhookId: string; readonly auth: SealedAuth }) => {
      const auth = target.auth
      const context = secretContext(target.webhookId, auth.type)
      switch (auth.type) {
        case "basic":
          return Effect.map(
            secretBox.open(auth.password, context),
            (password): OpenAuth => ({ type: "basic", username: auth.username, password })
          )
        case "bearer":
          return Effect.map(secretBox.open(auth.token, context), (token): OpenAuth => ({ type: "bearer", token }))
        case "hmac":
          return Effect.map(secretBox.open(auth.secret, context), (secret): OpenAuth => ({ type: "hmac", secret }))
      }
    }

    const headersFor = (
      claimed: ClaimedDelivery,
      attempt: number,
      auth: OpenAuth,
      nowSeconds: number
    ): Record<string, string> => {
      const headers: Record<string, string> = {
        "Content-Type": "application/json",
        "X-Delivery-Id": claimed.id,
        "X-Event-Id": claimed.eventId,
        "X-Event-Type": claimed.eventType,
        "X-Delivery-Attempt": String(attempt)
      }
      switch (auth.type) {
        case "basic":
          headers.Authorization = basicAuthorization(auth.username, auth.password)
          break
        case "bearer":
          headers.Authorization = bearerAuthorization(auth.token)
          break
        case "hmac":
          Object.assign(headers, signatureHeaders(auth.secret, nowSeconds, claimed.body))
          break
      }
      return headers
    }

    // One attempt; `undefined` when it could not be made (the secret does not open), in which
    // case nothing is recorded and the lease runs out, so the delivery is tried again later
    // instead of burning the receiver's attempts on a server-side fault.
    const attemptOne = (claimed: ClaimedDelivery): Effect.Effect<Omit<Finished, "written"> | undefined> =>
      Effect.gen(function* () {
        const attempt = claimed.attempts + 1
        const logContext = {
          deliveryId: claimed.id,
          webhookId: claimed.webhookId,
          eventId: claimed.eventId,
          eventType: claimed.eventType,
          attempt
        }
        const auth = yield* Effect.either(openAuth(claimed.target))
        if (Either.isLeft(auth)) {
          const error: SecretBoxError = auth.left
          yield* Effect.logError("A webhook secret does not open; the delivery waits for its lease to expire").pipe(
            Effect.annotateLogs({ ...logContext, reason: error.message })
          )
          return undefined
        }
        const start = yield* Clock.currentTimeMillis
        // Registration refuses credentials the header builders would throw on; a throw is a defect.
        const headers = yield* Effect.sync(() => headersFor(claimed, attempt, auth.right, Math.floor(start / 1000)))
        const result = yield* sender
          .send({ url: claimed.target.url, headers, body: claimed.body, timeoutMs: settings.timeoutMs })
          .pipe(
            Effect.timeoutFail({
              duration: settings.timeoutMs,
              onTimeout: () =>
                new SendError({ reason: "timeout", message: `No response within ${settings.timeoutMs} ms` })
            }),
            Effect.either
          )
        const end = yield* Clock.currentTimeMillis
        const statusCode = Either.isRight(result) ? result.right.statusCode : null
        const succeeded = statusCode !== null && isSuccess(statusCode)
        const error: ErrorClass | null = succeeded ? null : Either.isLeft(result) ? result.left.reason : "http"
        const record: Attempt = {
          at: Math.floor(start / 1000),
          statusCode,
          durationMs: Math.max(0, end - start),
          error
        }
        let completion: Completion
        if (succeeded) {
          completion = {
            deliveryId: claimed.id,
            leaseToken: claimed.leaseToken,
            attempt: record,
            status: "succeeded",
            retryAt: null
          }
        } else if (attempt < maxAttempts) {
          const jitter = (yield* Random.next) * settings.retryJitter
          const retryAt = end + Math.ceil(settings.retryDelayMs * (1 + jitter))
          completion = {
            deliveryId: claimed.id,
            leaseToken: claimed.leaseToken,
            attempt: record,
            status: "pending",
            retryAt
          }
        } else {
          completion = {
            deliveryId: claimed.id,
            leaseToken: claimed.leaseToken,
            attempt: record,
            status: "failed",
            retryAt: null
          }
        }
        const annotations = {
          ...logContext,
          statusCode: statusCode ?? "none",
          durationMs: record.durationMs,
          error: error ?? "none"
        }
        yield* succeeded
          ? Effect.logDebug("Webhook delivery attempt succeeded").pipe(Effect.annotateLogs(annotations))
          : Effect.logWarning("Webhook delivery attempt failed").pipe(Effect.annotateLogs(annotations))
        return {
          claimed,
          completion,
          detail: describeFailure(statusCode, Either.isLeft(result) ? result.left : undefined)
        }
      }).pipe(
        Effect.catchAllDefect((defect) =>
          Effect.as(
            Effect.logError("A delivery attempt could not be made").pipe(
              Effect.annotateLogs({
                deliveryId: claimed.id,
                webhookId: claimed.webhookId,
                defect: String(defect).slice(0, 200)
              })
            ),
            undefined
          )
        )
      )

    // Writes completions in one transaction with the alerts of deliveries that failed for good.
    const persist = (batch: ReadonlyArray<Finished>) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const raised = yield* transactor.withTransaction(
          Effect.gen(function* () {
            const applied = new Set(yield* store.complete(batch.map((item) => item.completion)))
            const out: Array<FailureAlert> = []
            for (const item of batch) {
              if (item.completion.status !== "failed" || !applied.has(item.completion.deliveryId)) continue
              const alert: FailureAlert = {
                id: Id.format("alr", now, crypto.getRandomValues(new Uint8Array(10))),
                webhookId: item.claimed.webhookId,
                deliveryId: item.claimed.id,
                eventId: item.claimed.eventId,
                eventType: item.claimed.eventType,
                reason: `${maxAttempts} attempts failed; last: ${item.detail}`,
                createdAt: Math.floor(now / 1000)
              }
              yield* alerts.raise(item.claimed.workspaceId, alert)
              out.push(alert)
            }
            return out
          })
        )
        for (const alert of raised) {
          yield* Effect.logError("Webhook delivery failed").pipe(
            Effect.annotateLogs({
              alertId: alert.id,
              webhookId: alert.webhookId,
              deliveryId: alert.deliveryId,
              eventId: alert.eventId,
              eventType: alert.eventType,
              reason: alert.reason
            })
          )
        }
      })

    const completer = (queue: Queue.Queue<Finished>) =>
      Effect.forever(
        Effect.gen(function* () {
          const batch = Chunk.toReadonlyArray(yield* Queue.takeBetween(queue, 1, settings.completionBatchSize))
          // A failed write loses nothing: the leases run out and the deliveries are sent again.
          yield* persist(batch).pipe(
            Effect.catchAllCause((cause) =>
              Cause.isInterruptedOnly(cause)
                ? Effect.failCause(cause)
                : Effect.logError("Delivery results could not be written; they will be retried", cause)
            )
          )
          yield* Effect.forEach(batch, (item) => Deferred.succeed(item.written, undefined), { discard: true })
        })
      )

    // Attempts in flight per webhook and in all, over every loop of this dispatcher.
    const inFlight = new Map<string, number>()
    let total = 0

    const claim = (free: number) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const excludeWebhooks: Array<string> = []
        for (const [webhookId, count] of inFlight) {
          if (count >= settings.perWebhookConcurrency) excludeWebhooks.push(webhookId)
        }
        return yield* store.claimDue({
          now,
          limit: free,
          maxPerWebhook: settings.perWebhookConcurrency,
          excludeWebhooks,
          leaseUntil: now + settings.leaseMs,
          leaseToken: randomToken()
        })
      })

    interface Loop {
      readonly scope: Scope.Scope
      readonly finished: Queue.Queue<Finished>
      readonly slotFreed: Queue.Queue<void>
      readonly tally: Tally
      readonly onRetry: (retryAt: number) => Effect.Effect<void>
      mine: number
    }

    const start = (loop: Loop, claimed: ClaimedDelivery) =>
      Effect.gen(function* () {
        total++
        loop.mine++
        inFlight.set(claimed.webhookId, (inFlight.get(claimed.webhookId) ?? 0) + 1)
        const release = Effect.suspend(() => {
          total--
          loop.mine--
          const left = (inFlight.get(claimed.webhookId) ?? 1) - 1
          if (left === 0) inFlight.delete(claimed.webhookId)
          else inFlight.set(claimed.webhookId, left)
          return Queue.offer(loop.slotFreed, undefined)
        })
        yield* Effect.forkIn(
          Effect.gen(function* () {
            const finished = yield* attemptOne(claimed)
            if (finished === undefined) return
            loop.tally.attempts++
            const status = finished.completion.status
            if (status === "succeeded") loop.tally.succeeded++
            else if (status === "failed") loop.tally.failed++
            else loop.tally.retried++
            const written = yield* Deferred.make<void>()
            yield* Queue.offer(loop.finished, { ...finished, written })
            yield* Deferred.await(written)
            if (status === "pending" && finished.completion.retryAt !== null) {
              yield* loop.onRetry(finished.completion.retryAt)
            }
          }).pipe(Effect.ensuring(release)),
          loop.scope
        )
      })

    const makeLoop = (slotFreed: Queue.Queue<void>, onRetry: Loop["onRetry"]) =>
      Effect.gen(function* () {
        const scope = yield* Effect.scope
        const finished = yield* Queue.unbounded<Finished>()
        yield* Effect.forkIn(completer(finished), scope)
        const loop: Loop = {
          scope,
          finished,
          slotFreed,
          tally: { attempts: 0, succeeded: 0, retried: 0, failed: 0 },
          onRetry,
          mine: 0
        }
        return loop
      })

    const deliverDue: Effect.Effect<DeliverySummary> = Effect.scoped(
      Effect.gen(function* () {
        const slotFreed = yield* Queue.sliding<void>(1)
        const loop = yield* makeLoop(slotFreed, () => Effect.void)
        while (true) {
          const free = settings.concurrency - total
          const claimed = free > 0 ? yield* claim(free) : []
          for (const item of claimed) yield* start(loop, item)
          if (claimed.length === 0 && loop.mine === 0) break
          // More may be due when the claim was full; else wait until a slot frees up (a busy
          // webhook may become claimable again).
          if (claimed.length === 0 || claimed.length < free) yield* Queue.take(slotFreed)
        }
        return { ...loop.tally }
      })
    ).pipe(Effect.withSpan("Dispatcher.deliverDue"))

    const waitFor = (queue: Queue.Queue<void>) =>
      Queue.take(queue).pipe(Effect.timeoutOption(settings.pollIntervalMs), Effect.asVoid)

    const survive = <A>(self: Effect.Effect<A>, what: string): Effect.Effect<A | undefined> =>
      self.pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.zipRight(
                Effect.logError(`The dispatcher's ${what} loop failed; it goes on after a pause`, cause),
                Effect.as(Effect.sleep(settings.pollIntervalMs), undefined)
              )
        )
      )

    const run: Effect.Effect<never> = Effect.scoped(
      Effect.gen(function* () {
        const scope = yield* Effect.scope
        const onRetry = (retryAt: number) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.forkIn(
              Effect.zipRight(Effect.sleep(Math.max(0, retryAt - now)), Queue.offer(deliverWake, undefined)),
              scope
            )
          ).pipe(Effect.asVoid)
        const loop = yield* makeLoop(deliverWake, onRetry)
        yield* Effect.forkIn(
          Effect.forever(
            Effect.gen(function* () {
              const result = yield* survive(fanOut, "fan-out")
              if (result === undefined || result.events < settings.fanOutBatchSize) yield* waitFor(fanOutWake)
            })
          ),
          scope
        )
        return yield* Effect.forever(
          Effect.gen(function* () {
            const free = settings.concurrency - total
            const claimed = free > 0 ? ((yield* survive(claim(free), "delivery")) ?? []) : []
            for (const item of claimed) yield* start(loop, item)
            if (claimed.length === 0 || claimed.length < free) yield* waitFor(deliverWake)
          })
        )
      })
    )

    return Dispatcher.of({ fanOut, fanOutAll, deliverDue, run, wake })
  })

/**
 * The dispatcher over its ports.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<
  Dispatcher,
  never,
  OutboxReader | WebhookRepository | DeliveryStore | FailureAlerts | SecretBox | HttpSender | Transactor
> => Layer.effect(Dispatcher, make(options))
