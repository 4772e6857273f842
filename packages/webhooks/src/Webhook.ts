/**
 * Webhooks (contract §5): the registration request, the stored webhook and the response (secrets masked).
 * @since 0.1.0
 */
import * as Id from "@waybill/core/Id"
import { WorkspaceId } from "@waybill/core/Workspace"
import { EventType } from "@waybill/events/EventType"
import { FilterGroup } from "@waybill/filters/Filter"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

/** What every secret reads in a response, whatever the secret. @since 0.1.0 */
export const MASK = "********" as const

/** Secret lengths, in characters: HMAC secrets 16–512, passwords and tokens 1–512. @since 0.1.0 */
export const secretLength = {
  hmac: { min: 16, max: 512 },
  password: { min: 1, max: 512 },
  token: { min: 1, max: 512 }
} as const

/** Other limits of a registration: URL length, username length, description length. @since 0.1.0 */
export const limits = { url: 2048, username: 512, description: 1000 } as const

const WriteOnly = (min: number, max: number, what: string) =>
  Schema.String.pipe(Schema.minLength(min), Schema.maxLength(max)).annotations({
    description: `${what}; write-only: stored encrypted, returned as "${MASK}"`
  })

/** How an HMAC webhook signs: `waybill` (the default) or `standard-webhooks` (with a `whsec_…` secret). @since 0.1.0 */
export const SignatureScheme = Schema.Literal("waybill", "standard-webhooks").annotations({
  identifier: "SignatureScheme"
})

/** @since 0.1.0 */
export type SignatureScheme = typeof SignatureScheme.Type

/** The `auth` of a registration request: Basic, Bearer or HMAC. @since 0.1.0 */
export const AuthRequest = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("basic"),
    username: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(limits.username)).annotations({
      description: "Sent as Authorization: Basic base64(username:password); no colon"
    }),
    password: WriteOnly(secretLength.password.min, secretLength.password.max, "The Basic password")
  }).annotations({ identifier: "BasicAuthRequest" }),
  Schema.Struct({
    type: Schema.Literal("bearer"),
    token: WriteOnly(secretLength.token.min, secretLength.token.max, "Sent as Authorization: Bearer <token>")
  }).annotations({ identifier: "BearerAuthRequest" }),
  Schema.Struct({
    type: Schema.Literal("hmac"),
    secret: WriteOnly(
      secretLength.hmac.min,
      secretLength.hmac.max,
      "The HMAC-SHA256 shared secret; for scheme standard-webhooks, whsec_ followed by base64 of 24 to 64 bytes"
    ),
    scheme: Schema.optional(SignatureScheme.annotations({ description: "waybill (default) or standard-webhooks" }))
  }).annotations({ identifier: "HmacAuthRequest" })
).annotations({ identifier: "WebhookAuthRequest" })

/** @since 0.1.0 */
export type AuthRequest = typeof AuthRequest.Type

/** The per-event filters: each key one of the subscribed events, each value a filter group. @since 0.1.0 */
export const Filters = Schema.Record({ key: Schema.String, value: FilterGroup }).annotations({
  identifier: "WebhookFilters",
  description: "Per subscribed event type, a filter group (contract §6)"
})

/** @since 0.1.0 */
export type Filters = typeof Filters.Type

/** Whether a webhook's deliveries are sent (`enabled`) or held (`disabled`, contract §8). @since 0.1.0 */
export const WebhookStatus = Schema.Literal("enabled", "disabled").annotations({ identifier: "WebhookStatus" })

/** @since 0.1.0 */
export type WebhookStatus = typeof WebhookStatus.Type

/** Why a webhook is disabled: an operator's `disable` (`manual`), or failures in a row (`failing`). @since 0.1.0 */
export const DisabledReason = Schema.Literal("manual", "failing").annotations({ identifier: "WebhookDisabledReason" })

/** @since 0.1.0 */
export type DisabledReason = typeof DisabledReason.Type

/** How a webhook's deliveries are ordered: `none` (the default, in parallel) or `fifo` (one at a time). @since 0.1.0 */
export const Ordering = Schema.Literal("none", "fifo", "key").annotations({ identifier: "WebhookOrdering" })

/** @since 0.1.0 */
export type Ordering = typeof Ordering.Type

/** The bounds of `rateLimitPerSecond`: attempts started per second, over every process. @since 0.1.0 */
export const rateLimitBounds = { min: 1, max: 10_000 } as const

const RateLimit = Schema.Int.pipe(Schema.between(rateLimitBounds.min, rateLimitBounds.max))

/** The body of `POST /webhooks`, for documentation; `validateRegistration` checks a request. @since 0.1.0 */
export const RegisterWebhook = Schema.Struct({
  url: Schema.String.annotations({ description: "Absolute https:// URL of a globally reachable host" }),
  events: Schema.Array(EventType).pipe(Schema.minItems(1)).annotations({ description: "Unique catalogue types" }),
  filters: Schema.optional(Filters),
  auth: AuthRequest,
  description: Schema.optional(Schema.String.pipe(Schema.maxLength(limits.description))),
  rateLimitPerSecond: Schema.optional(
    Schema.NullOr(RateLimit).annotations({
      description:
        "Attempts to the webhook start at most this many in any one second, over every process (1 to 10000); null (the default): no limit"
    })
  ),
  ordering: Schema.optional(
    Ordering.annotations({
      description:
        "fifo: one delivery at a time, in the order the events were recorded; key: the same per event orderingKey, different keys at once; none (the default): no ordering"
    })
  )
}).annotations({ identifier: "RegisterWebhook" })

/** @since 0.1.0 */
export type RegisterWebhook = typeof RegisterWebhook.Encoded

/** A secret as the `SecretBox` sealed it: safe to store, useless without the key. @since 0.1.0 */
export const SealedSecret = Schema.String.pipe(Schema.brand("@waybill/webhooks/SealedSecret")).annotations({
  identifier: "SealedSecret"
})

/** @since 0.1.0 */
export type SealedSecret = typeof SealedSecret.Type

/**
 * A webhook's previous HMAC secret during a rotation's overlap, used until `expiresAt` (epoch s, exclusive).
 * @since 0.1.0
 */
export const PreviousSecret = Schema.Struct({ secret: SealedSecret, expiresAt: Schema.Int }).annotations({
  identifier: "PreviousSecret"
})

/** @since 0.1.0 */
export type PreviousSecret = typeof PreviousSecret.Type

/** Stored authentication: the secret part sealed. @since 0.1.0 */
export const SealedAuth = Schema.Union(
  Schema.Struct({ type: Schema.Literal("basic"), username: Schema.String, password: SealedSecret }),
  Schema.Struct({ type: Schema.Literal("bearer"), token: SealedSecret }),
  Schema.Struct({
    type: Schema.Literal("hmac"),
    secret: SealedSecret,
    // Webhooks stored before the scheme existed sign the Waybill way.
    scheme: Schema.optionalWith(SignatureScheme, { default: () => "waybill" as const }),
    previous: Schema.optional(PreviousSecret)
  })
).annotations({ identifier: "SealedAuth" })

/** @since 0.1.0 */
export type SealedAuth = typeof SealedAuth.Type

/** Authentication with its secret opened for one attempt, still `Redacted` so it never prints. @since 0.1.0 */
export type OpenAuth =
  | { readonly type: "basic"; readonly username: string; readonly password: Redacted.Redacted<string> }
  | { readonly type: "bearer"; readonly token: Redacted.Redacted<string> }
  | {
      readonly type: "hmac"
      readonly secret: Redacted.Redacted<string>
      readonly scheme: SignatureScheme
      readonly previous?: { readonly secret: Redacted.Redacted<string>; readonly expiresAt: number } | undefined
    }

/**
 * A stored webhook. Storage raises `revision` (from 1) on every change (console edit, rotation,
 * end of an overlap), so anything derived from a webhook may be cached by id and `revision`.
 * @since 0.1.0
 */
export const Webhook = Schema.Struct({
  id: Schema.String,
  workspaceId: WorkspaceId,
  url: Schema.String,
  events: Schema.Array(EventType),
  filters: Filters,
  auth: SealedAuth,
  description: Schema.NullOr(Schema.String),
  createdAt: Schema.Int,
  revision: Schema.optionalWith(Schema.Int, { default: () => 1 }),
  // Webhooks stored before flow control are enabled, unlimited, unordered.
  status: Schema.optionalWith(WebhookStatus, { default: () => "enabled" as const }),
  disabledReason: Schema.optional(DisabledReason),
  disabledAt: Schema.optional(Schema.Int),
  rateLimitPerSecond: Schema.optionalWith(Schema.NullOr(Schema.Int), { default: () => null }),
  ordering: Schema.optionalWith(Ordering, { default: () => "none" as const })
}).annotations({ identifier: "StoredWebhook" })

/** @since 0.1.0 */
export type Webhook = typeof Webhook.Type

/** Authentication as responses show it: every secret masked. @since 0.1.0 */
export const MaskedAuth = Schema.Union(
  Schema.Struct({ type: Schema.Literal("basic"), username: Schema.String, password: Schema.Literal(MASK) }),
  Schema.Struct({ type: Schema.Literal("bearer"), token: Schema.Literal(MASK) }),
  Schema.Struct({
    type: Schema.Literal("hmac"),
    secret: Schema.Literal(MASK),
    scheme: SignatureScheme,
    previousSecretExpiresAt: Schema.optional(
      Schema.Int.annotations({
        description:
          "Present while a rotation's overlap runs: until then (epoch seconds) deliveries are also signed with the previous secret"
      })
    )
  })
).annotations({ identifier: "WebhookAuth" })

/** @since 0.1.0 */
export type MaskedAuth = typeof MaskedAuth.Type

/**
 * A webhook as the API answers it; only a disabled one shows `disabledReason` and `disabledAt`, and
 * while it holds deliveries `heldDeliveries` and (unless the retention is 0) `oldestHeldExpiresAt`.
 * @since 0.1.0
 */
export const WebhookResponse = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(EventType),
  filters: Filters,
  auth: MaskedAuth,
  description: Schema.NullOr(Schema.String),
  createdAt: Schema.Int,
  status: WebhookStatus,
  disabledReason: Schema.optional(
    DisabledReason.annotations({ description: "Present while disabled: manual, or failing (automatic disabling)" })
  ),
  disabledAt: Schema.optional(Schema.Int.annotations({ description: "Present while disabled: since when (epoch s)" })),
  oldestHeldExpiresAt: Schema.optional(
    Schema.Int.annotations({
      description:
        "Present while the webhook holds deliveries (disabled) and the retention is not 0: when (epoch s) the oldest of them expires, its event passing the retention, unless the webhook is enabled first; an expired delivery is never sent"
    })
  ),
  heldDeliveries: Schema.optional(
    Schema.Int.pipe(Schema.positive()).annotations({
      description:
        "Present while the webhook holds deliveries (disabled): how many, all of them, whatever their events' age; Enable sends them in event order"
    })
  ),
  rateLimitPerSecond: Schema.NullOr(Schema.Int),
  ordering: Ordering
}).annotations({ identifier: "Webhook" })

/** @since 0.1.0 */
export type WebhookResponse = typeof WebhookResponse.Type

/** A previous HMAC secret if its overlap still runs at `now` (epoch seconds). @since 0.1.0 */
export const activePrevious = <P extends { readonly expiresAt: number }>(
  previous: P | undefined,
  now: number
): P | undefined => (previous !== undefined && previous.expiresAt > now ? previous : undefined)

/** Masks every secret; a previous HMAC secret shows as its expiry while its overlap runs at `now`. @since 0.1.0 */
export const maskAuth = (auth: SealedAuth | OpenAuth | AuthRequest, now?: number): MaskedAuth => {
  switch (auth.type) {
    case "basic":
      return { type: "basic", username: auth.username, password: MASK }
    case "bearer":
      return { type: "bearer", token: MASK }
    case "hmac": {
      const previous = "previous" in auth ? activePrevious(auth.previous, now ?? Number.NEGATIVE_INFINITY) : undefined
      return previous === undefined
        ? { type: "hmac", secret: MASK, scheme: auth.scheme ?? "waybill" }
        : { type: "hmac", secret: MASK, scheme: auth.scheme ?? "waybill", previousSecretExpiresAt: previous.expiresAt }
    }
  }
}

/**
 * When a held delivery expires (epoch s): its event's time, which its id carries, plus the retention
 * (`Retention.Window`); none when the retention is 0 (nothing is removed) or the id carries no time.
 * @since 0.3.0
 */
export const heldExpiresAt = (deliveryId: string, retentionMs: number): number | undefined =>
  retentionMs <= 0
    ? undefined
    : Option.match(Id.timeOf(deliveryId), {
        onNone: () => undefined,
        onSome: (eventAt) => Math.floor((eventAt + retentionMs) / 1000)
      })

/**
 * The response form of a stored webhook, as of `now` (epoch seconds; see `maskAuth`), with
 * `oldestHeldExpiresAt` (see `heldExpiresAt`) and `heldDeliveries` when given.
 * @since 0.1.0
 */
export const toResponse = (
  webhook: Webhook,
  now?: number,
  oldestHeldExpiresAt?: number,
  heldDeliveries?: number
): WebhookResponse => ({
  id: webhook.id,
  url: webhook.url,
  events: webhook.events,
  filters: webhook.filters,
  auth: maskAuth(webhook.auth, now),
  description: webhook.description,
  createdAt: webhook.createdAt,
  status: webhook.status,
  ...(webhook.status === "disabled" && webhook.disabledReason !== undefined && webhook.disabledAt !== undefined
    ? { disabledReason: webhook.disabledReason, disabledAt: webhook.disabledAt }
    : {}),
  ...(oldestHeldExpiresAt === undefined ? {} : { oldestHeldExpiresAt }),
  ...(heldDeliveries === undefined || heldDeliveries <= 0 ? {} : { heldDeliveries }),
  rateLimitPerSecond: webhook.rateLimitPerSecond,
  ordering: webhook.ordering
})

/** The part of a webhook the dispatcher needs to send, as of its `revision`. @since 0.1.0 */
export interface Target {
  readonly webhookId: string
  readonly revision: number
  readonly url: string
  readonly auth: SealedAuth
  readonly status: WebhookStatus
  readonly rateLimitPerSecond: number | null
  readonly ordering: Ordering
}

/** The delivery target of a webhook. @since 0.1.0 */
export const targetOf = (webhook: Webhook): Target => ({
  webhookId: webhook.id,
  revision: webhook.revision,
  url: webhook.url,
  auth: webhook.auth,
  status: webhook.status,
  rateLimitPerSecond: webhook.rateLimitPerSecond,
  ordering: webhook.ordering
})

/**
 * A secret's place, bound into its sealing so a value copied to another webhook or field does not open.
 * @since 0.1.0
 */
export const secretContext = (webhookId: string, type: SealedAuth["type"]): string =>
  `${webhookId}/auth.${secretFieldOf(type)}`

/** Where a webhook's previous HMAC secret belongs: a place of its own (see `secretContext`). @since 0.1.0 */
export const previousSecretContext = (webhookId: string): string => `${webhookId}/auth.previousSecret`

/** The sealed secret of a stored authentication setting. @since 0.1.0 */
export const sealedSecretOf = (auth: SealedAuth): SealedSecret =>
  auth.type === "basic" ? auth.password : auth.type === "bearer" ? auth.token : auth.secret

/** The field of an authentication type that holds its secret. @since 0.1.0 */
export const secretFieldOf = (type: SealedAuth["type"]): "password" | "token" | "secret" =>
  type === "basic" ? "password" : type === "bearer" ? "token" : "secret"
