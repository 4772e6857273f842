/**
 * The dispatcher (contract §5): fan-out and at-least-once delivery; how: docs/internals.md (Dispatcher).
 * @since 0.1.0
 */
import * as Availability from "@waybill/core/Availability"
import { Transactor } from "@waybill/core/Transactor"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { DeliveryStore } from "./DeliveryStore.js"
import { FailureAlerts } from "./FailureAlerts.js"
import { HttpSender } from "./HttpSender.js"
import { makeAttempts } from "./internal/attempts.js"
import * as Busy from "./internal/busy.js"
import { claimFor, makeLoop } from "./internal/deliveryLoop.js"
import type { Env } from "./internal/env.js"
import { fanOutOnce, fanOutParts, fanOutStep } from "./internal/fanOut.js"
import { makeMatcher } from "./internal/matching.js"
import type { Settings } from "./internal/settings.js"
import * as Signal from "./internal/signal.js"
import { OutboxReader } from "./OutboxReader.js"
import { SecretBox } from "./SecretBox.js"
import { WebhookRepository } from "./WebhookRepository.js"

/** Dispatcher settings; every one has a default. @since 0.1.0 */
export interface Options {
  /** One attempt's deadline (DNS, connect, request, response headers). Default 20 000 ms. */
  readonly timeoutMs?: number | undefined
  /** The delay before the one retry; never shorter. Default 10 000 ms. */
  readonly retryDelayMs?: number | undefined
  /** The retry waits up to this fraction longer than `retryDelayMs`. Default 0.2. */
  readonly retryJitter?: number | undefined
  /** Attempts in flight at once in one delivery loop, over all webhooks. Default 128. */
  readonly concurrency?: number | undefined
  /** Attempts in flight at once to one webhook, in one delivery loop. Default 32. */
  readonly perWebhookConcurrency?: number | undefined
  /**
   * How long a claim (and the fan-out's turn) holds without renewal: renewed every third of it
   * while held, so it bounds how long a killed process's deliveries wait. Default 6 000 ms, at least 3 000.
   */
  readonly leaseMs?: number | undefined
  /** How long a stop awaits attempts in flight before it abandons them. Default 10 000 ms; 0 abandons at once. */
  readonly shutdownGraceMs?: number | undefined
  /** How often `run` looks for work when nobody wakes it. Default 1 000 ms. */
  readonly pollIntervalMs?: number | undefined
  /** Events fan-out reads at once, at most (one `fanOut` transaction). Default 256. */
  readonly fanOutBatchSize?: number | undefined
  /** While events arrive fast and the process is busy, the least time between reads. Default 20 ms. */
  readonly fanOutGapMs?: number | undefined
  /** Completions per write. Default 256. */
  readonly completionBatchSize?: number | undefined
  /** How long `run` may hold fresh deliveries before recording them (with their results). Default 100 ms. */
  readonly recordDelayMs?: number | undefined
  /** Disables a webhook (`failing`) after this many deliveries in a row ended `failed`. Default 0: never. */
  readonly disableAfterFailures?: number | undefined
}

const positive = (value: number | undefined, fallback: number) =>
  value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback

const settingsOf = (options: Options): Settings => {
  const timeoutMs = positive(options.timeoutMs, 20_000)
  const concurrency = Math.floor(positive(options.concurrency, 128))
  const perWebhookConcurrency = Math.min(concurrency, Math.floor(positive(options.perWebhookConcurrency, 32)))
  const completionBatchSize = Math.floor(positive(options.completionBatchSize, 256))
  const leaseMs = Math.max(positive(options.leaseMs, 6_000), 3_000)
  return {
    timeoutMs,
    retryDelayMs: positive(options.retryDelayMs, 10_000),
    retryJitter: Math.min(0.2, Math.max(0, options.retryJitter ?? 0.2)),
    concurrency,
    perWebhookConcurrency,
    leaseMs,
    // Two renewals may fail before the lease runs out.
    renewEveryMs: Math.floor(leaseMs / 3),
    shutdownGraceMs:
      options.shutdownGraceMs !== undefined && Number.isFinite(options.shutdownGraceMs)
        ? Math.max(0, options.shutdownGraceMs)
        : 10_000,
    pollIntervalMs: positive(options.pollIntervalMs, 1_000),
    fanOutBatchSize: Math.floor(positive(options.fanOutBatchSize, 256)),
    completionBatchSize,
    recordDelayMs: positive(options.recordDelayMs, 100),
    disableAfterFailures: Math.floor(positive(options.disableAfterFailures, 0)),
    fanOutGapMs: positive(options.fanOutGapMs, 20),
    busyRead: 8,
    waitingMaxMs: 100,
    perWebhookWindow: 2 * perWebhookConcurrency,
    handOffWindow: 4 * perWebhookConcurrency,
    window: 2 * concurrency,
    maxUnwritten: 2 * completionBatchSize
  }
}

/** What one fan-out did. @since 0.1.0 */
export interface FanOutSummary {
  readonly events: number
  readonly deliveries: number
}

/** What `deliverDue` did: attempts made, and how they ended. @since 0.1.0 */
export interface DeliverySummary {
  readonly attempts: number
  readonly succeeded: number
  readonly retried: number
  readonly failed: number
}

/** @since 0.1.0 */
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
    /** Events were published: `run` fans out at once. */
    readonly wake: Effect.Effect<void>
    /** Deliveries were made due outside fan-out (a resend, a replay): `run` claims at once. */
    readonly wakeDelivery: Effect.Effect<void>
  }
>() {}

/** Builds a dispatcher from its ports. @since 0.1.0 */
export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const settings = settingsOf(options)
    const availability = yield* Effect.serviceOption(Availability.Availability)
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

    const env: Env = {
      settings,
      outbox,
      store,
      alerts,
      repository,
      transactor,
      matcher: makeMatcher(repository),
      attemptOne: makeAttempts(settings, secretBox, sender),
      deliverWake,
      logWriteFailure
    }
    const fanOut = fanOutOnce(env)

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
        const loop = yield* makeLoop(env, Signal.make(), () => Effect.void, undefined)
        while (true) {
          const claimed = yield* claimFor(env, loop)
          if (claimed === "blocked") yield* loop.written.wait
          else if (claimed === 0 && loop.lanes.held() === 0) {
            if (loop.unwritten === 0) break
            yield* loop.written.wait
          } else yield* loop.wanted.wait
        }
        return { ...loop.tally }
      })
    ).pipe(Effect.withSpan("Dispatcher.deliverDue", { captureStackTrace: false }))

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
        const loop = yield* makeLoop(env, deliverWake, onRetry, fanOutParts(env))
        const fan = loop.fan!
        const gauge = Busy.make(0.75, 100)
        let waitingFor = 1
        const fanOutReporter = yield* reporterOf("fan-out")
        const deliveryReporter = yield* reporterOf("delivery")
        // Polling: one ticker wakes both loops, so a wait costs no timer of its own.
        yield* Effect.forkIn(Effect.forever(Effect.zipRight(Effect.sleep(settings.pollIntervalMs), wakeBoth)), scope)
        yield* Effect.forkIn(
          Effect.forever(
            Effect.gen(function* () {
              const step = yield* survive(fanOutStep(env, loop, fan), fanOutReporter)
              if (step === "full") yield* loop.room.wait
              else if (step === "blocked")
                yield* Effect.raceFirst(fan.drained.wait, Effect.sleep(settings.recordDelayMs))
              else if (step !== "more") {
                const readAt = yield* Clock.currentTimeMillis
                // Nothing may announce the end of the transaction events wait behind: look again soon.
                if (fan.waiting) {
                  yield* Effect.raceFirst(fanOutWake.wait, Effect.sleep(waitingFor))
                  waitingFor = Math.min(settings.waitingMaxMs, 2 * waitingFor)
                  return
                }
                waitingFor = 1
                yield* fanOutWake.wait
                // Busy and events arriving fast: let them gather, fewer reads leave CPU to requests.
                const now = yield* Clock.currentTimeMillis
                if (fan.lastRead >= settings.busyRead && gauge.busy(now) && now - readAt < settings.fanOutGapMs) {
                  yield* Effect.sleep(settings.fanOutGapMs - (now - readAt))
                }
              }
            })
          ),
          scope
        )
        return yield* Effect.forever(
          Effect.gen(function* () {
            const claimed = yield* survive(claimFor(env, loop), deliveryReporter)
            if (claimed === "blocked") yield* loop.written.wait
            else yield* deliverWake.wait
          })
        )
      })
    )

    const wakeDelivery = Effect.sync(() => deliverWake.notify())

    return Dispatcher.of({ fanOut, fanOutAll, deliverDue, run, wake, wakeDelivery })
  })

/** The dispatcher over its ports. @since 0.1.0 */
export const layer = (
  options: Options = {}
): Layer.Layer<
  Dispatcher,
  never,
  OutboxReader | WebhookRepository | DeliveryStore | FailureAlerts | SecretBox | HttpSender | Transactor
> => Layer.effect(Dispatcher, make(options))
