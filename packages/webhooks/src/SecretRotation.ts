/**
 * Secret rotation (contract §8): the rules of `POST /webhooks/{id}/rotate` and the sweep of expired
 * previous secrets. Only HMAC has an overlap: one `Authorization` header cannot carry two credentials.
 * @since 0.1.0
 */
import * as Issue from "@waybill/core/Issue"
import * as JsonText from "@waybill/core/JsonText"
import * as Sweep from "@waybill/core/Sweep"
import * as ValidationError from "@waybill/core/ValidationError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { validateAuth } from "./Registration.js"
import type { SecretBox } from "./SecretBox.js"
import { isRecord, openObject, own } from "./service/jsonObject.js"
import {
  AuthRequest,
  MASK,
  type OpenAuth,
  previousSecretContext,
  type SealedAuth,
  secretContext,
  secretFieldOf
} from "./Webhook.js"
import { WebhookRepository } from "./WebhookRepository.js"

/** How long the previous HMAC secret keeps signing, in seconds: a day by default, at most a week. @since 0.1.0 */
export const overlapSeconds = { default: 86_400, max: 604_800 } as const

/** The body of `POST /webhooks/{id}/rotate`, for documentation; `validateRotation` checks a request. @since 0.1.0 */
export const RotateSecret = Schema.Struct({
  auth: AuthRequest.annotations({
    description:
      "The new authentication, of the webhook's type (and, for hmac, its scheme; omitted means the webhook's). Secret lengths as in POST /webhooks."
  }),
  overlapSeconds: Schema.optional(
    Schema.Int.pipe(Schema.between(0, overlapSeconds.max)).annotations({
      description:
        "hmac: how long the previous secret keeps signing beside the new one (default 86400; 0 replaces it at once). basic and bearer: 0 or omitted, the new credentials replace the old at once."
    })
  )
}).annotations({ identifier: "RotateSecret" })

/** @since 0.1.0 */
export type RotateSecret = typeof RotateSecret.Encoded

/** A rotation that passed every rule: the new authentication (secret `Redacted`) and its overlap. @since 0.1.0 */
export interface Rotation {
  readonly auth: OpenAuth
  readonly overlapSeconds: number
}

const knownFields = new Set(["auth", "overlapSeconds"])

// The mask is what a form shows for a stored secret, never a new one.
const checkAuth = (value: unknown, stored: SealedAuth): { issues: Array<Issue.Issue>; auth: OpenAuth | undefined } => {
  const refused = (path: string, message: string) => ({ issues: [Issue.make(path, message)], auth: undefined })
  if (value === undefined) return refused("auth", "is required")
  if (!isRecord(value)) return refused("auth", `must be an object with type ${stored.type}`)
  if (own(value, "type") !== stored.type) {
    return refused(
      "auth.type",
      `must be ${stored.type}, the webhook's authentication type (the console's edit changes the type)`
    )
  }
  let request = value
  if (stored.type === "hmac") {
    const scheme = own(value, "scheme")
    if (scheme === undefined) request = { ...value, scheme: stored.scheme }
    else if (scheme !== stored.scheme) {
      return refused(
        "auth.scheme",
        `must be ${stored.scheme}, the webhook's signature scheme (the console's edit changes the scheme)`
      )
    }
  }
  const field = secretFieldOf(stored.type)
  const checked = validateAuth(request)
  if (own(value, field) !== MASK) return checked
  return {
    issues: [
      Issue.make(`auth.${field}`, `is the mask "${MASK}": a rotation needs the new secret`),
      ...checked.issues.filter((issue) => issue.path !== `auth.${field}`)
    ],
    auth: undefined
  }
}

const checkOverlap = (value: unknown, type: SealedAuth["type"]): { issues: Array<Issue.Issue>; seconds: number } => {
  const fallback = type === "hmac" ? overlapSeconds.default : 0
  if (value === undefined) return { issues: [], seconds: fallback }
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > overlapSeconds.max) {
    return {
      issues: [Issue.make("overlapSeconds", `must be an integer from 0 to ${overlapSeconds.max}`)],
      seconds: fallback
    }
  }
  if (type !== "hmac" && value > 0) {
    return {
      issues: [
        Issue.make(
          "overlapSeconds",
          `must be 0 for ${type} authentication: one Authorization header cannot carry two credentials, so the new ones replace the old at once`
        )
      ],
      seconds: 0
    }
  }
  return { issues: [], seconds: value }
}

/** Validates a rotation (same type and scheme as `stored`): every issue with its path, never a secret. @since 0.1.0 */
export const validateRotation = (
  input: unknown,
  stored: SealedAuth
): Either.Either<Rotation, ReadonlyArray<Issue.Issue>> =>
  Either.flatMap(openObject(input, knownFields), ({ issues, record }) => {
    const auth = checkAuth(own(record, "auth"), stored)
    issues.push(...auth.issues)
    const overlap = checkOverlap(own(record, "overlapSeconds"), stored.type)
    issues.push(...overlap.issues)
    // Text PostgreSQL could not store, where no other issue named its path.
    const reported = new Set(issues.map((issue) => issue.path))
    issues.push(...JsonText.textIssues(record).filter((issue) => !reported.has(issue.path)))
    if (issues.length > 0 || auth.auth === undefined) return Either.left(issues)
    return Either.right({ auth: auth.auth, overlapSeconds: overlap.seconds })
  })

/**
 * The authentication a rotation stores: with an HMAC overlap, the replaced secret resealed as previous.
 * @since 0.1.0
 */
export const withPrevious = (
  secretBox: SecretBox["Type"],
  rotation: {
    readonly webhookId: string
    readonly replaced: SealedAuth
    readonly rotated: SealedAuth
    readonly overlapSeconds: number
    readonly now: number
  }
): Effect.Effect<SealedAuth, ValidationError.ValidationError> => {
  const { webhookId, replaced, rotated } = rotation
  if (rotated.type !== "hmac" || replaced.type !== "hmac" || rotation.overlapSeconds === 0) {
    return Effect.succeed(rotated)
  }
  return secretBox.open(replaced.secret, secretContext(webhookId, "hmac")).pipe(
    Effect.mapError(() =>
      ValidationError.fromIssues(
        [
          Issue.make(
            "overlapSeconds",
            "must be 0: the current secret does not open with the server's secret key, so it cannot keep signing"
          )
        ],
        "rotation"
      )
    ),
    Effect.flatMap((secret) => secretBox.seal(secret, previousSecretContext(webhookId))),
    Effect.map((sealed) => ({
      ...rotated,
      previous: { secret: sealed, expiresAt: rotation.now + rotation.overlapSeconds }
    }))
  )
}

/** Webhooks whose previous secret one sweep step deletes at most (one statement each step). @since 0.1.0 */
export const sweepBatchSize = 500

/**
 * Deletes expired previous HMAC secrets in steps, raising revisions so caches drop them; answers how many.
 * @since 0.1.0
 */
export const sweepExpiredSecrets: Effect.Effect<number, never, WebhookRepository> = Effect.flatMap(
  WebhookRepository,
  (repository) => Sweep.inSteps(sweepBatchSize, repository.deleteExpiredSecrets)
)
