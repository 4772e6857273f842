/** One delivery attempt: credentials opened (and cached), headers signed afresh, the POST, its outcome. */

import * as Id from "@waybill/core/Id"
import { basicAuthorization, bearerAuthorization } from "@waybill/signing/Authorization"
import { signatureHeaders } from "@waybill/signing/Hmac"
import * as StandardWebhooks from "@waybill/signing/StandardWebhooks"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import { type Attempt, type ErrorClass, isSuccess, maxAttempts } from "../Delivery.js"
import { attemptNumber, type ClaimedDelivery, type Completion } from "../DeliveryStore.js"
import * as FlowControl from "../FlowControl.js"
import type { HttpSender, SendError, SendResponse } from "../HttpSender.js"
import type { SecretBox, SecretBoxError } from "../SecretBox.js"
import {
  activePrevious,
  type OpenAuth,
  type PreviousSecret,
  previousSecretContext,
  type SealedAuth,
  secretContext,
  type Target
} from "../Webhook.js"
import { recordOutcome, traced } from "./instrument.js"
import type { Settings } from "./settings.js"

/** A completed attempt, waiting to be written. */
export interface Outcome {
  readonly claimed: ClaimedDelivery
  readonly completion: Completion
  readonly detail: string
}

const samePrevious = (a: PreviousSecret | undefined, b: PreviousSecret | undefined): boolean =>
  a === undefined ? b === undefined : b !== undefined && a.secret === b.secret && a.expiresAt === b.expiresAt

const sameSealed = (a: SealedAuth, b: SealedAuth): boolean =>
  a.type === "basic"
    ? b.type === "basic" && a.username === b.username && a.password === b.password
    : a.type === "bearer"
      ? b.type === "bearer" && a.token === b.token
      : b.type === "hmac" && a.secret === b.secret && a.scheme === b.scheme && samePrevious(a.previous, b.previous)

const describeFailure = (statusCode: number | null, error: SendError | undefined): string =>
  statusCode !== null ? `HTTP ${statusCode}` : `${error?.reason ?? "error"}: ${(error?.message ?? "").slice(0, 200)}`

const headersFor = (
  claimed: ClaimedDelivery,
  attempt: number,
  auth: OpenAuth,
  nowSeconds: number,
  traceparent: string
): Record<string, string> => {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    traceparent,
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
    case "hmac": {
      // While a rotation's overlap runs, signed with the new secret and the previous one.
      const previous = activePrevious(auth.previous, nowSeconds)
      const secrets = previous === undefined ? auth.secret : [auth.secret, previous.secret]
      Object.assign(
        headers,
        auth.scheme === "standard-webhooks"
          ? StandardWebhooks.signatureHeaders(secrets, claimed.id, nowSeconds, claimed.body)
          : signatureHeaders(secrets, nowSeconds, claimed.body)
      )
      break
    }
  }
  return headers
}

// `startedAt` exactly (the record keeps seconds): the rate limit's bound is on starts.
const logAttempt = (outcome: Outcome, startedAt: number): Effect.Effect<void> => {
  const { claimed, completion } = outcome
  const annotations = {
    deliveryId: claimed.id,
    webhookId: claimed.webhookId,
    eventId: claimed.eventId,
    eventType: claimed.eventType,
    attempt: attemptNumber(claimed),
    trigger: claimed.trigger,
    statusCode: completion.attempt.statusCode ?? "none",
    startedAt: new Date(startedAt).toISOString(),
    durationMs: completion.attempt.durationMs,
    error: completion.attempt.error ?? "none"
  }
  return completion.status === "succeeded"
    ? Effect.logDebug("Webhook delivery attempt succeeded").pipe(Effect.annotateLogs(annotations))
    : Effect.logWarning("Webhook delivery attempt failed").pipe(Effect.annotateLogs(annotations))
}

/**
 * Makes one attempt; `undefined` when it could not be made (the secret does not open): nothing is
 * recorded and the lease runs out, so a server-side fault burns none of the receiver's attempts.
 * `"missedSlot"` when it would start after its rate-limit slots' `startBy` (a busy host woke it
 * late): its claim is to be given back, and its next claim holds more slots.
 */
export type AttemptOne = (claimed: ClaimedDelivery, debug: boolean) => Effect.Effect<Outcome | "missedSlot" | undefined>

export const makeAttempts = (
  settings: Settings,
  secretBox: SecretBox["Type"],
  sender: HttpSender["Type"]
): AttemptOne => {
  const missesSlot = (claimed: ClaimedDelivery, now: number): boolean => {
    const latest = FlowControl.latestStart(claimed)
    return latest !== undefined && now > latest
  }

  // Opened secrets by webhook id, while the sealed ones are the same: saves a cipher setup per attempt.
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
          : Effect.zipWith(
              secretBox.open(auth.secret, context),
              auth.previous === undefined
                ? Effect.succeed(undefined)
                : Effect.map(
                    secretBox.open(auth.previous.secret, previousSecretContext(target.webhookId)),
                    (secret) => ({ secret, expiresAt: auth.previous!.expiresAt })
                  ),
              (secret, previous): OpenAuth =>
                previous === undefined
                  ? { type: "hmac", secret, scheme: auth.scheme }
                  : { type: "hmac", secret, scheme: auth.scheme, previous }
            )
    return Effect.tap(open, (openedAuth) =>
      Effect.sync(() => {
        if (opened.size >= 10_000) opened.clear()
        opened.set(target.webhookId, { sealed: auth, auth: openedAuth })
      })
    )
  }

  const outcomeOf = (
    claimed: ClaimedDelivery,
    start: number,
    end: number,
    result: Either.Either<SendResponse, SendError>,
    retryDraw: number
  ): Outcome => {
    const attempt = claimed.attempts + 1
    // Numbered on across cycles; each cycle has one retry.
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
    // From the event's recording (its id's time); a ternary, not `Option.match`: no closures per attempt.
    const recordedAt = Id.timeOf(claimed.eventId)
    const latencyMs = Option.isSome(recordedAt) ? Math.max(0, end - recordedAt.value) : null
    const completion: Completion = succeeded
      ? { ...base, status: "succeeded", retryAt: null, latencyMs }
      : inCycle < maxAttempts
        ? {
            ...base,
            status: "pending",
            retryAt: end + Math.ceil(settings.retryDelayMs * (1 + retryDraw * settings.retryJitter))
          }
        : { ...base, status: "failed", retryAt: null, latencyMs }
    return {
      claimed,
      completion,
      detail: succeeded ? "" : describeFailure(statusCode, Either.isLeft(result) ? result.left : undefined)
    }
  }

  const send = (
    claimed: ClaimedDelivery,
    auth: OpenAuth,
    debug: boolean,
    traceparent: string,
    start: number
  ): Effect.Effect<Outcome> =>
    Effect.clockWith((clock) => {
      // Registration refuses credentials the header builders would throw on; a throw is a defect.
      const headers = headersFor(claimed, attemptNumber(claimed), auth, Math.floor(start / 1000), traceparent)
      return Effect.flatMap(
        Effect.either(
          sender.send({ url: claimed.target.url, headers, body: claimed.body, timeoutMs: settings.timeoutMs })
        ),
        (result) => {
          const end = clock.unsafeCurrentTimeMillis()
          const succeeded = Either.isRight(result) && isSuccess(result.right.statusCode)
          if (succeeded) {
            const outcome = outcomeOf(claimed, start, end, result, 0)
            recordOutcome(outcome)
            return debug ? Effect.as(logAttempt(outcome, start), outcome) : Effect.succeed(outcome)
          }
          return Effect.flatMap(Random.next, (draw) => {
            const outcome = outcomeOf(claimed, start, end, result, draw)
            recordOutcome(outcome)
            return Effect.as(logAttempt(outcome, start), outcome)
          })
        }
      )
    })

  // The slot is checked last before the send, once the credentials are open, at the time that
  // is the attempt's start: a start is never later than the check let it be, however late the
  // fiber runs on.
  const attemptWith = (
    claimed: ClaimedDelivery,
    auth: OpenAuth,
    debug: boolean
  ): Effect.Effect<Outcome | "missedSlot"> =>
    Effect.clockWith((clock): Effect.Effect<Outcome | "missedSlot"> => {
      const start = clock.unsafeCurrentTimeMillis()
      return missesSlot(claimed, start)
        ? Effect.succeed("missedSlot")
        : traced(claimed, (traceparent) => send(claimed, auth, debug, traceparent, start))
    })

  return (claimed, debug) => {
    const cached = cachedAuth(claimed.target)
    const attempt: Effect.Effect<Outcome | "missedSlot" | undefined> =
      cached !== undefined
        ? attemptWith(claimed, cached, debug)
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
            onSuccess: (auth) => attemptWith(claimed, auth, debug)
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
}
