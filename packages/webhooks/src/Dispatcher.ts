/**
 * The dispatcher (contract §5): turns recorded events into deliveries and delivers them.
 *
 * - **Fan-out** reads the outbox in order behind a stored position, under a lease one
 *   dispatcher holds at a time, and makes one delivery per subscribed webhook of the event's
 *   workspace whose filter matches; delivery ids are derived from event and webhook, so an
 *   event read again after a crash keeps them. Each event's body is parsed once (only if some
 *   filter needs it); compiled filters are cached per webhook and revision. A
 *   filtered-out event leaves nothing. `run` hands fresh deliveries to its own delivery loop
 *   and records them a moment later, with the results of the attempts that ended by then, in
 *   the transaction that moves the position: in the steady state a delivery costs one write.
 * - **Delivery** claims due deliveries in batches under a lease and attempts them with bounded
 *   concurrency and a per-webhook cap, webhooks taking turns for free slots, so one slow
 *   receiver cannot occupy every slot. An attempt starts only if it can end before its lease
 *   does. Each attempt POSTs the stored body unchanged with the contract's headers
 *   and authentication (HMAC signed afresh per attempt). A 2xx succeeds; anything else is
 *   retried exactly once, no sooner than the retry delay (plus up to 20 % jitter); a second
 *   failure marks the delivery failed and raises a failure alert in the same transaction.
 *   Results are written in batches while the next attempts go out.
 *
 * Delivery is at-least-once: a dispatcher that dies mid-attempt leaves a lease that expires,
 * and the delivery is sent again with the same `X-Delivery-Id`.
 *
 * @since 0.1.0
 */
import * as Availability from "@waybill/core/Availability"
import * as Id from "@waybill/core/Id"
import * as Random_ from "@waybill/core/RandomBytes"
import { Transactor } from "@waybill/core/Transactor"
import { type EventType, isEventType } from "@waybill/events/EventType"
import { guardedRoots } from "@waybill/events/FilterFields"
import { compileFilterEither, type Predicate } from "@waybill/filters/Filter"
import { basicAuthorization, bearerAuthorization } from "@waybill/signing/Authorization"
import { signatureHeaders } from "@waybill/signing/Hmac"
import * as StandardWebhooks from "@waybill/signing/StandardWebhooks"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import { type Attempt, type ErrorClass, isSuccess, maxAttempts } from "./Delivery.js"
import { type ClaimedDelivery, type Completion, DeliveryStore, type NewDelivery } from "./DeliveryStore.js"
import { type FailureAlert, FailureAlerts } from "./FailureAlerts.js"
import { HttpSender, type SendError, type SendResponse } from "./HttpSender.js"
import * as Lanes from "./internal/lanes.js"
import * as Signal from "./internal/signal.js"
import { type OutboxEvent, OutboxReader } from "./OutboxReader.js"
import { SecretBox, type SecretBoxError } from "./SecretBox.js"
import { type OpenAuth, type SealedAuth, secretContext, type Target, targetOf, type Webhook } from "./Webhook.js"
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
  /**
   * Attempts in flight at once, over all webhooks, in one delivery loop (`run` or a `deliverDue`
   * call). As many claimed deliveries again may wait for a slot. Default 128.
   */
  readonly concurrency?: number | undefined
  /**
   * Attempts in flight at once to one webhook, in one delivery loop; as many of its claimed
   * deliveries again may wait for a slot, and the others' turns come first. Default 32.
   */
  readonly perWebhookConcurrency?: number | undefined
  /** How long a claim holds a delivery; at least `timeoutMs` + 5 s. Default `timeoutMs` + 30 s. */
  readonly leaseMs?: number | undefined
  /** How often `run` looks for work when nobody wakes it. Default 1 000 ms. */
  readonly pollIntervalMs?: number | undefined
  /** Events fan-out reads at once, at most (one `fanOut` transaction). Default 256. */
  readonly fanOutBatchSize?: number | undefined
  /** Completions per write. Default 256. */
  readonly completionBatchSize?: number | undefined
  /**
   * How long `run` may hold fresh deliveries it sends itself before recording them: attempts
   * that end within it are recorded with the delivery, in one write instead of two. Default 100 ms.
   */
  readonly recordDelayMs?: number | undefined
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
    /** Fan-out and delivery as two loops, until interrupted; they poll, and `wake` hurries fan-out. */
    readonly run: Effect.Effect<never>
    /**
     * Events were published (in this process, or a database notification says so): `run` fans
     * out at once. Its delivery loop is woken by what fan-out stores, by retry times and by the
     * poll, not by events, which it would only find nothing for.
     */
    readonly wake: Effect.Effect<void>
    /**
     * Stored deliveries were made due outside fan-out (a resend or a replay): `run` claims at
     * once instead of at its next poll.
     */
    readonly wakeDelivery: Effect.Effect<void>
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
  readonly recordDelayMs: number
}

const positive = (value: number | undefined, fallback: number) =>
  value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback

const settingsOf = (options: Options): Settings => {
  const timeoutMs = positive(options.timeoutMs, 20_000)
  const concurrency = Math.floor(positive(options.concurrency, 128))
  return {
    timeoutMs,
    retryDelayMs: positive(options.retryDelayMs, 10_000),
    retryJitter: Math.min(0.2, Math.max(0, options.retryJitter ?? 0.2)),
    concurrency,
    perWebhookConcurrency: Math.min(concurrency, Math.floor(positive(options.perWebhookConcurrency, 32))),
    // A lease shorter than an attempt would let a second dispatcher send while the first waits.
    leaseMs: Math.max(positive(options.leaseMs, timeoutMs + 30_000), timeoutMs + 5_000),
    pollIntervalMs: positive(options.pollIntervalMs, 1_000),
    fanOutBatchSize: Math.floor(positive(options.fanOutBatchSize, 256)),
    completionBatchSize: Math.floor(positive(options.completionBatchSize, 256)),
    recordDelayMs: positive(options.recordDelayMs, 100)
  }
}

const failClosed: Predicate = () => false
const NOT_PARSED: unique symbol = Symbol("not parsed")
const UNPARSABLE: unique symbol = Symbol("unparsable")

// A completed attempt, waiting to be written.
interface Outcome {
  readonly claimed: ClaimedDelivery
  readonly completion: Completion
  readonly detail: string
}

const sameSealed = (a: SealedAuth, b: SealedAuth): boolean =>
  a.type === "basic"
    ? b.type === "basic" && a.username === b.username && a.password === b.password
    : a.type === "bearer"
      ? b.type === "bearer" && a.token === b.token
      : b.type === "hmac" && a.secret === b.secret && a.scheme === b.scheme

const debugEnabled = Effect.map(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) =>
  LogLevel.lessThanEqual(minimum, LogLevel.Debug)
)

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
    const availability = yield* Effect.serviceOption(Availability.Availability)
    // A write the unreachable database refused is said briefly (the loops report the outage);
    // any other failure with its cause.
    const logWriteFailure = (message: string, cause: Cause.Cause<unknown>) =>
      Option.isSome(availability) && availability.value.isOutage(Cause.squash(cause))
        ? Effect.logWarning(`${message} (the database cannot be reached)`)
        : Effect.logError(message, cause)
    const outbox = yield* OutboxReader
    const repository = yield* WebhookRepository
    const store = yield* DeliveryStore
    const alerts = yield* FailureAlerts
    const secretBox = yield* SecretBox
    const sender = yield* HttpSender
    const transactor = yield* Transactor

    const fanOutWake = Signal.make()
    const deliverWake = Signal.make()
    const wake = Effect.sync(() => fanOutWake.notify())
    const wakeBoth = Effect.sync(() => {
      fanOutWake.notify()
      deliverWake.notify()
    })

    // ---------------------------------------------------------------------------------------
    // Fan-out: matching events to webhooks
    // ---------------------------------------------------------------------------------------

    // webhook id → its revision and, per event type, the predicate. An edited webhook comes
    // with a higher revision and is compiled afresh; the map is cleared when it grows past a
    // bound, as deleted webhooks leave entries behind.
    const compiled = new Map<string, { readonly revision: number; readonly byType: Map<string, Predicate> }>()
    // What fan-out found worth a log line; logged after the batch, outside the hot loop.
    type Problem = { readonly message: string; readonly annotations: Record<string, string> }

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

    const payloadOf = (event: OutboxEvent): unknown => {
      try {
        const envelope: unknown = JSON.parse(event.body)
        return typeof envelope === "object" && envelope !== null && "payload" in envelope
          ? envelope.payload
          : UNPARSABLE
      } catch {
        return UNPARSABLE
      }
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
          target: targetOf(webhook)
        })
      }
    }

    // ---------------------------------------------------------------------------------------
    // Delivery
    // ---------------------------------------------------------------------------------------

    // Opened secrets by webhook id. Webhooks never change, and every attempt needs the secret
    // in clear anyway; opening it once saves a cipher setup per attempt. Bounded like `compiled`.
    const opened = new Map<string, { readonly sealed: SealedAuth; readonly auth: OpenAuth }>()

    const cachedAuth = (target: Target): OpenAuth | undefined => {
      const cached = opened.get(target.webhookId)
      return cached !== undefined && sameSealed(cached.sealed, target.auth) ? cached.auth : undefined
    }

    const openAuth = (target: Target): Effect.Effect<OpenAuth, SecretBoxError> => {
      const auth = target.auth
      const context = secretContext(target.webhookId, auth.type)
      const open: Effect.Effect<OpenAuth, SecretBoxError> =
        auth.type === "basic"
          ? Effect.map(secretBox.open(auth.password, context), (password) => ({
              type: "basic",
              username: auth.username,
              password
            }))
          : auth.type === "bearer"
            ? Effect.map(secretBox.open(auth.token, context), (token) => ({ type: "bearer", token }))
            : Effect.map(secretBox.open(auth.secret, context), (secret) => ({
                type: "hmac",
                secret,
                scheme: auth.scheme
              }))
      return Effect.tap(open, (openedAuth) =>
        Effect.sync(() => {
          if (opened.size >= 10_000) opened.clear()
          opened.set(target.webhookId, { sealed: auth, auth: openedAuth })
        })
      )
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
          Object.assign(
            headers,
            auth.scheme === "standard-webhooks"
              ? StandardWebhooks.signatureHeaders(auth.secret, claimed.id, nowSeconds, claimed.body)
              : signatureHeaders(auth.secret, nowSeconds, claimed.body)
          )
          break
      }
      return headers
    }

    // What an attempt ended with, as the delivery log records it.
    const outcomeOf = (
      claimed: ClaimedDelivery,
      start: number,
      end: number,
      result: Either.Either<SendResponse, SendError>,
      retryDraw: number
    ): Outcome => {
      const attempt = claimed.attempts + 1
      // Numbered on across cycles; each cycle (fan-out's, or a resend's or replay's) has one retry.
      const inCycle = attempt - claimed.cycleStart
      const statusCode = Either.isRight(result) ? result.right.statusCode : null
      const succeeded = statusCode !== null && isSuccess(statusCode)
      const error: ErrorClass | null = succeeded ? null : Either.isLeft(result) ? result.left.reason : "http"
      const record: Attempt = {
        at: Math.floor(start / 1000),
        statusCode,
        durationMs: Math.max(0, end - start),
        error,
        trigger: claimed.trigger
      }
      const base = { deliveryId: claimed.id, leaseToken: claimed.leaseToken, attempt: record }
      const completion: Completion = succeeded
        ? { ...base, status: "succeeded", retryAt: null }
        : inCycle < maxAttempts
          ? {
              ...base,
              status: "pending",
              retryAt: end + Math.ceil(settings.retryDelayMs * (1 + retryDraw * settings.retryJitter))
            }
          : { ...base, status: "failed", retryAt: null }
      return {
        claimed,
        completion,
        detail: succeeded ? "" : describeFailure(statusCode, Either.isLeft(result) ? result.left : undefined)
      }
    }

    const logAttempt = (outcome: Outcome): Effect.Effect<void> => {
      const { claimed, completion } = outcome
      const annotations = {
        deliveryId: claimed.id,
        webhookId: claimed.webhookId,
        eventId: claimed.eventId,
        eventType: claimed.eventType,
        attempt: claimed.attempts + 1,
        trigger: claimed.trigger,
        statusCode: completion.attempt.statusCode ?? "none",
        durationMs: completion.attempt.durationMs,
        error: completion.attempt.error ?? "none"
      }
      return completion.status === "succeeded"
        ? Effect.logDebug("Webhook delivery attempt succeeded").pipe(Effect.annotateLogs(annotations))
        : Effect.logWarning("Webhook delivery attempt failed").pipe(Effect.annotateLogs(annotations))
    }

    const send = (claimed: ClaimedDelivery, auth: OpenAuth, debug: boolean): Effect.Effect<Outcome> =>
      Effect.clockWith((clock) => {
        const start = clock.unsafeCurrentTimeMillis()
        // Registration refuses credentials the header builders would throw on; a throw is a defect.
        const headers = headersFor(claimed, claimed.attempts + 1, auth, Math.floor(start / 1000))
        // The sender enforces the deadline (its contract), so no timer is added here.
        return Effect.flatMap(
          Effect.either(
            sender.send({ url: claimed.target.url, headers, body: claimed.body, timeoutMs: settings.timeoutMs })
          ),
          (result) => {
            const end = clock.unsafeCurrentTimeMillis()
            const succeeded = Either.isRight(result) && isSuccess(result.right.statusCode)
            if (succeeded) {
              const outcome = outcomeOf(claimed, start, end, result, 0)
              return debug ? Effect.as(logAttempt(outcome), outcome) : Effect.succeed(outcome)
            }
            return Effect.flatMap(Random.next, (draw) => {
              const outcome = outcomeOf(claimed, start, end, result, draw)
              return Effect.as(logAttempt(outcome), outcome)
            })
          }
        )
      })

    // One attempt; `undefined` when it could not be made (the secret does not open), in which
    // case nothing is recorded and the lease runs out, so the delivery is tried again later
    // instead of burning the receiver's attempts on a server-side fault.
    const attemptOne = (claimed: ClaimedDelivery, debug: boolean): Effect.Effect<Outcome | undefined> => {
      const cached = cachedAuth(claimed.target)
      const attempt: Effect.Effect<Outcome | undefined> =
        cached !== undefined
          ? send(claimed, cached, debug)
          : Effect.matchEffect(openAuth(claimed.target), {
              onFailure: (error) =>
                Effect.as(
                  Effect.logError("A webhook secret does not open; the delivery waits for its lease to expire").pipe(
                    Effect.annotateLogs({
                      deliveryId: claimed.id,
                      webhookId: claimed.webhookId,
                      eventId: claimed.eventId,
                      reason: error.message
                    })
                  ),
                  undefined
                ),
              onSuccess: (auth) => send(claimed, auth, debug)
            })
      return Effect.catchAllDefect(attempt, (defect) =>
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
    }

    // Writes completions; the alerts of deliveries that failed for good go in the same
    // transaction. A batch without such failures is one atomic write, with no transaction.
    const persist = (batch: ReadonlyArray<Outcome>) =>
      Effect.gen(function* () {
        const completions = batch.map((item) => item.completion)
        if (!batch.some((item) => item.completion.status === "failed")) {
          yield* store.complete(completions)
          return
        }
        const now = yield* Clock.currentTimeMillis
        const raised = yield* transactor.withTransaction(
          Effect.gen(function* () {
            const applied = new Set(yield* store.complete(completions))
            const out: Array<FailureAlert> = []
            for (const item of batch) {
              if (item.completion.status !== "failed" || !applied.has(item.completion.deliveryId)) continue
              const alert: FailureAlert = {
                id: Id.makeAt("alr", now),
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

    // One delivery loop (`run`, or one `deliverDue` call): the work it claimed, waiting in
    // per-webhook lanes for a slot; long-lived workers that take it (no fiber per delivery);
    // and the completer, which writes results in batches while the workers go on sending (group
    // commit). A delivery's lease holds until its result is written, so nobody else sends it in
    // between; the loop claims no more while too many results wait to be written.
    //
    // Claims come in batches: the loop holds up to `concurrency` attempts in flight and as many
    // waiting (per webhook `perWebhookConcurrency` of each), and claims again once a webhook's
    // lane, or the whole, is half empty.
    interface Held {
      readonly claimed: ClaimedDelivery
      readonly leaseUntil: number
      /** The fan-out batch it came in, when `run` handed it over before recording it. */
      readonly batch?: Batch | undefined
    }
    interface Loop {
      readonly lanes: Lanes.Lanes<Held>
      readonly idle: Array<(effect: Effect.Effect<Held>) => void>
      /** Claiming is worth trying again. */
      readonly wanted: Signal.Signal
      /** The completer wrote a batch. */
      readonly written: Signal.Signal
      /** The completer has results to write. */
      readonly kick: Signal.Signal
      /** Webhooks that may have due deliveries in storage that this loop does not hold. */
      mayHaveMore: Set<string>
      /** The last claim was cut short by the loop's room in all. */
      fullClaim: boolean
      readonly tally: Tally
      readonly onRetry: (retryAt: number) => Effect.Effect<void>
      readonly debug: boolean
      batch: Array<Outcome>
      unwritten: number
      /** Room freed up for fan-out to read more events. */
      readonly room: Signal.Signal
      /** Set in `run`: fan-out hands fresh deliveries to this loop. */
      fan: FanOut | undefined
    }

    // Fresh deliveries that `run` handed to its own loop before recording them: the batch of
    // events they came from, recorded (its deliveries inserted, the outbox position moved past
    // it) once every attempt of the batch has ended or `recordDelayMs` has passed, whichever is
    // first. An attempt that ended by then is inserted with its result (one write for the
    // delivery, not two); the others are inserted leased to this loop, and their results
    // update the rows as usual.
    interface Batch {
      /** Its number in the fan-out's order. */
      readonly number: number
      readonly deliveries: Array<NewDelivery>
      /** The outbox position after the batch's last event. */
      readonly position: string
      readonly outcomes: Map<string, Outcome>
      /** Handed-over deliveries whose attempt has not ended. */
      inFlight: number
      readonly recordBy: number
      state: "open" | "writing" | "written" | "dropped"
      /** Results that came in while the batch was written; applied as updates after it. */
      late: Array<Outcome>
    }
    interface FanOut {
      /** This loop's name for the fan-out lease. */
      readonly owner: string
      /** Where reading has got to; `undefined` without the lease. */
      position: string | undefined
      /** The position storage holds, as far as this loop knows. */
      stored: string | undefined
      leaseUntil: number
      /** Read and not recorded yet, in order. */
      batches: Array<Batch>
      /** The first batch may be ready to record. */
      readonly ready: Signal.Signal
      /** Events read at most at once. */
      readLimit: number
      /**
       * The webhook whose full share holds the next event back, since when, how many of its
       * attempts ended since then, and at how much work it counts as drained (half what it held).
       */
      blocked: { readonly webhookId: string; since: number; ended: number; drainedAt: number } | undefined
      /** The blocking webhook's work went down to half its share, or its storage caught up. */
      readonly drained: Signal.Signal
      /** Webhooks whose fresh deliveries fan-out stores (see `holdsBack`). */
      readonly storing: Map<string, Storing>
      /** Batches are numbered in the order they are read: the last one made, the last recorded. */
      made: number
      recorded: number
      /** The last batch in which each webhook had a delivery stored, not handed over. */
      readonly lastStored: Map<string, number>
    }
    // A webhook whose fresh deliveries fan-out stores, measured over a window like a blocking
    // one: since when, how many of its attempts ended since then, and whether fan-out holds its
    // next event back until storage has caught up.
    interface Storing {
      since: number
      ended: number
      holding: boolean
    }

    const perWebhookWindow = 2 * settings.perWebhookConcurrency
    // What fan-out may hand one webhook while the loop has room to spare: fewer, larger reads.
    const handOffWindow = 4 * settings.perWebhookConcurrency
    const window = 2 * settings.concurrency
    const maxUnwritten = 2 * settings.completionBatchSize

    // Hands ready work to idle workers.
    const dispatchIdle = (loop: Loop) => {
      while (loop.idle.length > 0) {
        const next = loop.lanes.take()
        if (next === undefined) return
        loop.idle.pop()!(Effect.succeed(next))
      }
    }

    const takeWork = (loop: Loop): Effect.Effect<Held> =>
      Effect.suspend(() => {
        const next = loop.lanes.take()
        if (next !== undefined) return Effect.succeed(next)
        return Effect.async<Held>((resume) => {
          loop.idle.push(resume)
          return Effect.sync(() => {
            const index = loop.idle.indexOf(resume)
            if (index >= 0) loop.idle.splice(index, 1)
          })
        })
      })

    const finish = (loop: Loop, webhookId: string) => {
      loop.lanes.release(webhookId)
      const held = loop.lanes.held()
      if (
        held === 0 ||
        (held <= settings.concurrency && loop.fullClaim) ||
        (loop.mayHaveMore.has(webhookId) && loop.lanes.heldBy(webhookId) <= settings.perWebhookConcurrency)
      ) {
        loop.wanted.notify()
      }
      if (held <= window - settings.concurrency) loop.room.notify()
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

    const count = (loop: Loop, outcome: Outcome) => {
      loop.tally.attempts++
      const status = outcome.completion.status
      if (status === "succeeded") loop.tally.succeeded++
      else if (status === "failed") loop.tally.failed++
      else loop.tally.retried++
    }

    const record = (loop: Loop, outcome: Outcome) => {
      count(loop, outcome)
      loop.batch.push(outcome)
      loop.unwritten++
      if (loop.batch.length === 1) loop.kick.notify()
    }

    // An attempt starts only if it can end before its lease does; work that waited too long
    // is left alone, and another claim takes it once the lease has run out.
    const attemptHeld = (held: Held, debug: boolean): Effect.Effect<Outcome | undefined> =>
      Effect.clockWith((clock) =>
        clock.unsafeCurrentTimeMillis() + settings.timeoutMs < held.leaseUntil
          ? attemptOne(held.claimed, debug)
          : Effect.as(
              Effect.logWarning(
                "A claimed delivery waited too long for a slot; it is left for its lease to run out"
              ).pipe(Effect.annotateLogs({ deliveryId: held.claimed.id, webhookId: held.claimed.webhookId })),
              undefined
            )
      )

    // Where a result goes: with its delivery's insert while its batch is still open, after the
    // insert while the batch is being written, as an update once it is recorded; nowhere if
    // the batch was dropped (its events are fanned out again).
    const settle = (loop: Loop, held: Held, outcome: Outcome | undefined) => {
      const batch = held.batch
      if (batch === undefined || batch.state === "written") {
        if (outcome !== undefined) record(loop, outcome)
      } else if (batch.state === "open") {
        if (outcome !== undefined) batch.outcomes.set(held.claimed.id, outcome)
        if (--batch.inFlight === 0) loop.fan?.ready.notify()
      } else if (batch.state === "writing") {
        if (outcome !== undefined) batch.late.push(outcome)
      }
      finish(loop, held.claimed.webhookId)
    }

    const worker = (loop: Loop) =>
      Effect.forever(
        Effect.flatMap(takeWork(loop), (held) =>
          held.batch?.state === "dropped"
            ? Effect.sync(() => finish(loop, held.claimed.webhookId))
            : Effect.map(attemptHeld(held, loop.debug), (outcome) => settle(loop, held, outcome))
        )
      )

    const completer = (loop: Loop) =>
      Effect.forever(
        Effect.gen(function* () {
          yield* loop.kick.wait
          const batch = loop.batch
          if (batch.length === 0) return
          loop.batch = []
          for (let i = 0; i < batch.length; i += settings.completionBatchSize) {
            // A failed write loses nothing: the leases run out and the deliveries are sent again.
            yield* persist(batch.slice(i, i + settings.completionBatchSize)).pipe(
              Effect.catchAllCause((cause) =>
                Cause.isInterruptedOnly(cause)
                  ? Effect.failCause(cause)
                  : logWriteFailure("Delivery results could not be written; they will be retried", cause)
              )
            )
          }
          loop.unwritten -= batch.length
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

    // One claim for the loop's free room: `blocked` when too many results wait to be written,
    // `busy` when the loop holds too much work for a claim to be worth it, else how many
    // deliveries it claimed.
    const claimFor = (loop: Loop): Effect.Effect<number | "blocked" | "busy"> =>
      Effect.gen(function* () {
        if (loop.unwritten >= maxUnwritten) return "blocked" as const
        const limit = window - loop.lanes.held()
        if (limit < settings.concurrency) {
          loop.fullClaim = true
          return "busy" as const
        }
        const roomByWebhook = new Map<string, number>()
        for (const [webhookId, held] of loop.lanes.heldByKey()) {
          roomByWebhook.set(webhookId, held > settings.perWebhookConcurrency ? 0 : perWebhookWindow - held)
        }
        const now = yield* Clock.currentTimeMillis
        const leaseUntil = now + settings.leaseMs
        // Batches recorded from now on may be too late for the claim to see.
        const recordedBefore = loop.fan?.recorded ?? 0
        const claimed = yield* store.claimDue({
          now,
          limit,
          maxPerWebhook: perWebhookWindow,
          roomByWebhook,
          leaseUntil,
          leaseToken: Random_.token()
        })
        const counts = new Map<string, number>()
        for (const item of claimed) counts.set(item.webhookId, (counts.get(item.webhookId) ?? 0) + 1)
        // What the claim learnt about storage: a webhook that got room and less than it has
        // nothing more there; one left out (room 0) keeps what was known of it.
        const mayHaveMore = new Set<string>()
        for (const webhookId of loop.mayHaveMore) if (roomByWebhook.get(webhookId) === 0) mayHaveMore.add(webhookId)
        for (const [webhookId, count] of counts) {
          if (count >= (roomByWebhook.get(webhookId) ?? perWebhookWindow)) mayHaveMore.add(webhookId)
        }
        loop.mayHaveMore = mayHaveMore
        const fan = loop.fan
        if (fan !== undefined) {
          // So does one whose deliveries fan-out stored in a batch the claim may not have seen:
          // handing its next ones over would send them first.
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
        for (const item of claimed) loop.lanes.push(item.webhookId, { claimed: item, leaseUntil })
        dispatchIdle(loop)
        return claimed.length
      })

    const makeLoop = (wanted: Signal.Signal, onRetry: Loop["onRetry"], handOff: boolean) =>
      Effect.gen(function* () {
        const loop: Loop = {
          lanes: Lanes.make(settings.perWebhookConcurrency),
          idle: [],
          wanted,
          written: Signal.make(),
          kick: Signal.make(),
          mayHaveMore: new Set(),
          fullClaim: false,
          tally: { attempts: 0, succeeded: 0, retried: 0, failed: 0 },
          onRetry,
          debug: yield* debugEnabled,
          batch: [],
          unwritten: 0,
          room: Signal.make(),
          fan: handOff
            ? {
                owner: Random_.token(),
                position: undefined,
                stored: undefined,
                leaseUntil: 0,
                batches: [],
                ready: Signal.make(),
                readLimit: settings.fanOutBatchSize,
                blocked: undefined,
                drained: Signal.make(),
                storing: new Map(),
                made: 0,
                recorded: 0,
                lastStored: new Map()
              }
            : undefined
        }
        // On a stop, after the workers, the completer and the recorder are interrupted: the
        // fan-out batches are recorded (attempts cut short stay pending, unleased, to be sent
        // again at once by whoever runs next) and the fan-out lease is released; then the
        // results gathered and not written yet are written, so those deliveries are not sent
        // again.
        yield* Effect.addFinalizer(() =>
          Effect.gen(function* () {
            const fan = loop.fan
            if (fan !== undefined) {
              const batches = fan.batches.filter((batch) => batch.state !== "dropped" && batch.state !== "written")
              yield* recordBatches(loop, fan, batches, true)
            }
            if (loop.batch.length > 0) yield* persist(loop.batch)
          }).pipe(
            Effect.catchAllCause((cause) =>
              Effect.logError("Delivery results could not be written at stop; they will be sent again", cause)
            )
          )
        )
        yield* Effect.forkScoped(completer(loop))
        if (loop.fan !== undefined) yield* Effect.forkScoped(recorder(loop, loop.fan))
        for (let i = 0; i < settings.concurrency; i++) yield* Effect.forkScoped(worker(loop))
        return loop
      })

    // ---------------------------------------------------------------------------------------
    // Fan-out
    // ---------------------------------------------------------------------------------------

    // The deliveries of a batch of events: one per subscribed webhook of the event's workspace
    // whose filter matches.
    const deliveriesOf = (events: ReadonlyArray<OutboxEvent>, now: number) =>
      Effect.gen(function* () {
        const subscribers = new Map<string, ReadonlyArray<Webhook>>()
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

    // One batch, on its own: takes the fan-out lease for the transaction (none while a `run`
    // holds it), inserts the deliveries, moves the position and releases the lease.
    const fanOut: Effect.Effect<FanOutSummary> = Effect.gen(function* () {
      const result = yield* transactor.withTransaction(
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const owner = Random_.token()
          const position = yield* outbox.acquire(owner, now, now + settings.leaseMs)
          if (Option.isNone(position)) return { events: 0, deliveries: 0 }
          const events = yield* outbox.read(position.value, settings.fanOutBatchSize)
          const deliveries = events.length === 0 ? [] : yield* deliveriesOf(events, now)
          yield* store.insert(deliveries)
          yield* outbox.advance(owner, events.at(-1)?.position ?? position.value, 0)
          return { events: events.length, deliveries: deliveries.length }
        })
      )
      if (result.deliveries > 0) deliverWake.notify()
      return result
    }).pipe(Effect.withSpan("Dispatcher.fanOut"))

    // Gives up what was read and not recorded; reading starts again from the stored position.
    const dropBatches = (fan: FanOut) => {
      for (const batch of fan.batches) batch.state = "dropped"
      fan.batches = []
      fan.position = undefined
    }

    // One step of `run`'s fan-out: reads as many events as the loop has room for and hands
    // their deliveries over, event by event. "full" when the loop has no room, "blocked" when
    // an event waits for its webhook's share of the loop, "idle" when nothing more is there
    // to read (or another dispatcher holds the lease).
    const fanOutStep = (loop: Loop, fan: FanOut): Effect.Effect<"more" | "idle" | "full" | "blocked"> =>
      Effect.gen(function* () {
        const room = window - loop.lanes.held()
        if (room < settings.concurrency || loop.unwritten >= maxUnwritten) return "full" as const
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
        // A webhook has held the next event back for the patience: read a whole batch, to see
        // whether another webhook's delivery waits behind it (see `handOff`).
        const lookAhead = fan.blocked !== undefined && now - fan.blocked.since >= settings.recordDelayMs
        const limit = lookAhead ? settings.fanOutBatchSize : Math.min(fan.readLimit, room)
        const events = yield* outbox.read(fan.position!, limit)
        if (events.length === 0) return "idle" as const
        const deliveries = yield* deliveriesOf(events, now)
        const taken = handOff(loop, fan, events, deliveries, now)
        if (taken.events > 0) {
          const batch: Batch = {
            number: ++fan.made,
            deliveries: taken.deliveries,
            position: events[taken.events - 1]!.position,
            outcomes: new Map(),
            inFlight: taken.held.length,
            recordBy: now + settings.recordDelayMs,
            state: "open",
            late: []
          }
          for (const held of taken.held) loop.lanes.push(held.claimed.webhookId, { ...held, batch })
          for (const delivery of taken.deliveries) {
            if (delivery.lease === undefined) fan.lastStored.set(delivery.webhookId, batch.number)
          }
          fan.batches.push(batch)
          fan.position = batch.position
          fan.ready.notify()
          dispatchIdle(loop)
        }
        // Reads no more than fitted last time a webhook's share ran out, and twice as much
        // after a batch that fitted whole.
        if (taken.events < events.length) {
          fan.readLimit = Math.max(16, taken.events)
          return "blocked" as const
        }
        fan.readLimit = Math.min(settings.fanOutBatchSize, 2 * fan.readLimit)
        return events.length < limit ? ("idle" as const) : ("more" as const)
      }).pipe(Effect.withSpan("Dispatcher.fanOut"))

    // Whether the webhook `full`, which holds the next event back, has its deliveries stored
    // now (see `handOff`); `deliveries` from `after` on are those read behind the event. A
    // webhook found busy, not slow, is measured afresh over the next `recordDelayMs`.
    const storeAround = (
      loop: Loop,
      fan: FanOut,
      full: string,
      deliveries: ReadonlyArray<NewDelivery>,
      after: number,
      now: number
    ): boolean => {
      const blocked = fan.blocked
      if (blocked?.webhookId !== full || now - blocked.since < settings.recordDelayMs) return false
      if (blocked.ended < settings.perWebhookConcurrency || waitsBehind(loop, full, deliveries, after)) {
        fan.storing.set(full, { since: now, ended: 0, holding: false })
        return true
      }
      blocked.since = now
      blocked.ended = 0
      return false
    }

    // Whether fan-out holds back the next event of `webhookId`, whose fresh deliveries it
    // stores: once the webhook keeps pace again (as many attempts ended in `recordDelayMs` as a
    // busy one's) with nobody waiting behind it, its next events wait in the outbox until a
    // claim has caught up with its storage, and then go back to one write each. Measured
    // afresh every `recordDelayMs`; stored it stays while it is slow or in someone's way.
    const holdsBack = (
      loop: Loop,
      fan: FanOut,
      webhookId: string,
      deliveries: ReadonlyArray<NewDelivery>,
      after: number,
      now: number
    ): boolean => {
      const storing = fan.storing.get(webhookId)
      if (storing === undefined) {
        fan.storing.set(webhookId, { since: now, ended: 0, holding: false })
        return false
      }
      if (now - storing.since < settings.recordDelayMs) return storing.holding
      storing.holding =
        storing.ended >= settings.perWebhookConcurrency && !waitsBehind(loop, webhookId, deliveries, after)
      storing.since = now
      storing.ended = 0
      return storing.holding
    }

    // Whether another webhook's delivery, one fan-out would hand over, is among `deliveries`
    // from `after` on.
    const waitsBehind = (
      loop: Loop,
      webhookId: string,
      deliveries: ReadonlyArray<NewDelivery>,
      after: number
    ): boolean => {
      for (let i = after; i < deliveries.length; i++) {
        const other = deliveries[i]!.webhookId
        if (other !== webhookId && !loop.mayHaveMore.has(other) && loop.lanes.heldBy(other) < perWebhookWindow) {
          return true
        }
      }
      return false
    }

    // Takes events from the front of a batch while all their deliveries fit in the loop: each
    // webhook holds at most `2 × perWebhookConcurrency`. An event that does not fit waits in the
    // outbox, to be read again once its webhook's work has gone down, so the order holds. If
    // its webhook is still full after `recordDelayMs`, its deliveries are stored instead, to be
    // claimed as it keeps up, and the others go on: when it is slow (fewer than
    // `perWebhookConcurrency` of its attempts ended in that time), or when another webhook's
    // delivery waits behind it in what was read. A webhook that keeps pace with nobody behind
    // it is only busy: storing its deliveries would cost two more writes each and speed nobody
    // up, so the event keeps waiting. A webhook with deliveries waiting in storage gets none
    // handed over either, so it keeps its order; once it keeps pace again, its event waits too,
    // until storage has caught up (`holdsBack`).
    const handOff = (
      loop: Loop,
      fan: FanOut,
      events: ReadonlyArray<OutboxEvent>,
      deliveries: Array<NewDelivery>,
      now: number
    ) => {
      const lease = { until: now + settings.leaseMs, token: Random_.token() }
      const held: Array<Held> = []
      let room = window - loop.lanes.held()
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
          const webhookId = deliveries[i]!.webhookId
          if (loop.mayHaveMore.has(webhookId)) {
            if (heldBack === undefined && holdsBack(loop, fan, webhookId, deliveries, end, now)) heldBack = webhookId
            continue
          }
          need++
          const count = (pending.get(webhookId) ?? 0) + 1
          pending.set(webhookId, count)
          const holding = loop.lanes.heldBy(webhookId) + count
          // Beyond its share only while the loop keeps `concurrency` free for the others.
          if (
            full === undefined &&
            holding > perWebhookWindow &&
            (holding > handOffWindow || room - need < settings.concurrency)
          ) {
            full = webhookId
          }
        }
        if (heldBack !== undefined) {
          cutBy = heldBack
          break
        }
        if (full !== undefined || need > room) {
          if (full !== undefined && storeAround(loop, fan, full, deliveries, end, now)) {
            loop.mayHaveMore.add(full)
            fan.blocked = undefined
          } else if (taken > 0 || full !== undefined) {
            cutBy = full
            break
          } else {
            // More deliveries than the whole loop has room for: store them.
            for (let i = next; i < end; i++) loop.mayHaveMore.add(deliveries[i]!.webhookId)
          }
        }
        for (let i = next; i < end; i++) {
          const delivery = deliveries[i]!
          const webhookId = delivery.webhookId
          if (loop.mayHaveMore.has(webhookId) || room <= 0) {
            loop.mayHaveMore.add(webhookId)
            continue
          }
          room--
          deliveries[i] = { ...delivery, lease }
          held.push({
            claimed: {
              id: delivery.id,
              workspaceId: delivery.workspaceId,
              webhookId,
              eventId: delivery.eventId,
              eventType: delivery.eventType,
              body: delivery.body,
              attempts: 0,
              cycleStart: 0,
              trigger: "automatic",
              leaseToken: lease.token,
              target: delivery.target
            },
            leaseUntil: lease.until
          })
        }
        next = end
      }
      if (cutBy !== undefined) {
        if (fan.blocked?.webhookId !== cutBy) {
          fan.blocked = {
            webhookId: cutBy,
            since: now,
            ended: 0,
            drainedAt: Math.max(settings.perWebhookConcurrency, loop.lanes.heldBy(cutBy) >> 1)
          }
        }
      } else fan.blocked = undefined
      return { events: taken, deliveries: deliveries.slice(0, next), held }
    }

    // Records batches in order: their deliveries inserted (with the results in so far) and the
    // outbox position moved past them, in one transaction, only while this loop holds the
    // fan-out lease. If that fails, everything read and not recorded is given up and read again.
    const recordBatches = (loop: Loop, fan: FanOut, batches: ReadonlyArray<Batch>, stopping: boolean) =>
      Effect.gen(function* () {
        if (batches.length === 0 && (!stopping || fan.stored === undefined)) return
        const rows: Array<NewDelivery> = []
        const retries: Array<number> = []
        for (const batch of batches) {
          batch.state = "writing"
          // Results that came in during a write that did not finish go with this one.
          for (const outcome of batch.late) batch.outcomes.set(outcome.claimed.id, outcome)
          batch.late = []
          for (const delivery of batch.deliveries) {
            const outcome = batch.outcomes.get(delivery.id)
            // A final failure is written as an update after the insert, which raises its alert.
            if (outcome !== undefined && outcome.completion.status !== "failed") {
              count(loop, outcome)
              const { status, retryAt, attempt } = outcome.completion
              if (retryAt !== null) retries.push(retryAt)
              rows.push({
                ...delivery,
                lease: undefined,
                dueAt: retryAt ?? delivery.dueAt,
                outcome: { status, attempt }
              })
            } else {
              if (outcome !== undefined) batch.late.push(outcome)
              // At a stop nothing is in flight any more: the rest is free to be sent at once.
              rows.push(stopping && outcome === undefined ? { ...delivery, lease: undefined } : delivery)
            }
          }
        }
        const now = yield* Clock.currentTimeMillis
        const leaseUntil = stopping ? 0 : now + settings.leaseMs
        const position = batches.at(-1)?.position ?? fan.stored!
        const recorded = yield* transactor
          .withTransaction(
            Effect.flatMap(outbox.advance(fan.owner, position, leaseUntil), (held) =>
              held ? Effect.as(store.insert(rows), true) : Effect.succeed(false)
            )
          )
          .pipe(
            Effect.catchAllCause((cause) =>
              Cause.isInterruptedOnly(cause)
                ? Effect.failCause(cause)
                : Effect.as(logWriteFailure("Fresh deliveries could not be recorded", cause), false)
            )
          )
        if (!recorded) {
          if (batches.length > 0) {
            yield* Effect.logWarning(
              "Fan-out gave up deliveries it had not recorded; their events are fanned out again"
            ).pipe(Effect.annotateLogs({ deliveries: rows.length }))
          }
          dropBatches(fan)
          return
        }
        fan.stored = position
        fan.recorded = batches.at(-1)?.number ?? fan.recorded
        fan.leaseUntil = leaseUntil
        fan.batches = fan.batches.slice(batches.length)
        for (const batch of batches) {
          batch.state = "written"
          for (const outcome of batch.late) record(loop, outcome)
          batch.late = []
        }
        for (const retryAt of retries) yield* loop.onRetry(retryAt)
        if (rows.some((row) => row.lease === undefined && row.outcome === undefined)) deliverWake.notify()
      })

    // Records the first batch once all its attempts have ended or its time is up, with the
    // ready batches behind it.
    const recorder = (loop: Loop, fan: FanOut) =>
      Effect.forever(
        Effect.gen(function* () {
          const first = fan.batches[0]
          if (first === undefined) return yield* fan.ready.wait
          const now = yield* Clock.currentTimeMillis
          if (first.inFlight > 0 && now < first.recordBy) {
            return yield* Effect.raceFirst(fan.ready.wait, Effect.sleep(first.recordBy - now))
          }
          let count = 1
          while (count < fan.batches.length && count < 8 && fan.batches[count]!.inFlight === 0) count++
          yield* recordBatches(loop, fan, fan.batches.slice(0, count), false)
        })
      )

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

    const deliverDue: Effect.Effect<DeliverySummary> = Effect.scoped(
      Effect.gen(function* () {
        const loop = yield* makeLoop(Signal.make(), () => Effect.void, false)
        while (true) {
          const claimed = yield* claimFor(loop)
          if (claimed === "blocked") yield* loop.written.wait
          else if (claimed === 0 && loop.lanes.held() === 0) {
            if (loop.unwritten === 0) break
            yield* loop.written.wait
          } else yield* loop.wanted.wait
        }
        return { ...loop.tally }
      })
    ).pipe(Effect.withSpan("Dispatcher.deliverDue"))

    // A failed turn is reported (an outage once, not once a turn) and the loop goes on after a pause.
    const survive = <A>(self: Effect.Effect<A>, reporter: Availability.LoopReporter): Effect.Effect<A | undefined> =>
      self.pipe(
        Effect.tap(() => reporter.succeeded),
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.zipRight(reporter.failed(cause), Effect.as(Effect.sleep(settings.pollIntervalMs), undefined))
        )
      )
    const reporterOf = (what: string) =>
      Availability.loopReporter(
        `the dispatcher's ${what} loop`,
        `The dispatcher's ${what} loop failed; it goes on after a pause`
      )

    const run: Effect.Effect<never> = Effect.scoped(
      Effect.gen(function* () {
        const scope = yield* Effect.scope
        const onRetry = (retryAt: number) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.forkIn(
              Effect.zipRight(
                Effect.sleep(Math.max(0, retryAt - now)),
                Effect.sync(() => deliverWake.notify())
              ),
              scope
            )
          ).pipe(Effect.asVoid)
        const loop = yield* makeLoop(deliverWake, onRetry, true)
        const fan = loop.fan!
        const fanOutReporter = yield* reporterOf("fan-out")
        const deliveryReporter = yield* reporterOf("delivery")
        // Polling: one ticker wakes both loops, so a wait costs no timer of its own.
        yield* Effect.forkIn(Effect.forever(Effect.zipRight(Effect.sleep(settings.pollIntervalMs), wakeBoth)), scope)
        yield* Effect.forkIn(
          Effect.forever(
            Effect.gen(function* () {
              const step = yield* survive(fanOutStep(loop, fan), fanOutReporter)
              if (step === "full") yield* loop.room.wait
              else if (step === "blocked")
                yield* Effect.raceFirst(fan.drained.wait, Effect.sleep(settings.recordDelayMs))
              else if (step !== "more") yield* fanOutWake.wait
            })
          ),
          scope
        )
        return yield* Effect.forever(
          Effect.gen(function* () {
            const claimed = yield* survive(claimFor(loop), deliveryReporter)
            if (claimed === "blocked") yield* loop.written.wait
            else yield* deliverWake.wait
          })
        )
      })
    )

    const wakeDelivery = Effect.sync(() => deliverWake.notify())

    return Dispatcher.of({ fanOut, fanOutAll, deliverDue, run, wake, wakeDelivery })
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
