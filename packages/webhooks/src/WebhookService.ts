/**
 * The webhook service behind `POST/GET/DELETE /webhooks`, `GET /webhooks/filter-fields`,
 * `GET /webhooks/{id}/deliveries`, resend and replay, `GET /webhooks/{id}/stats` and `GET /alerts`
 * (contract §5 and §8), over the ports
 * `WebhookRepository`, `DeliveryStore`, `FailureAlerts`, `SecretBox`, `HostResolver`,
 * `PropertyDefinitions` and `Transactor`. Every method acts in the caller's `CurrentWorkspace`;
 * another workspace's webhook is not found. Responses mask every secret.
 * @since 0.1.0
 */
import * as Id from "@waybill/core/Id"
import * as Idempotency from "@waybill/core/Idempotency"
import * as Issue from "@waybill/core/Issue"
import { Transactor } from "@waybill/core/Transactor"
import * as ValidationError from "@waybill/core/ValidationError"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import { isEventType, notInCatalogue } from "@waybill/events/EventType"
import { filterFields as catalogueFields } from "@waybill/events/FilterFields"
import { PropertyDefinitions } from "@waybill/events/PropertyDefinition"
import type { FilterField } from "@waybill/filters/FilterField"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { DeliveryLog } from "./Delivery.js"
import type * as DeliveryStats from "./DeliveryStats.js"
import * as DeliveryStore from "./DeliveryStore.js"
import { type FailureAlert, FailureAlerts } from "./FailureAlerts.js"
import { HostResolver } from "./HostResolver.js"
import * as DeliveryLogOperations from "./internal/deliveryLog.js"
import * as Page from "./Page.js"
import {
  hostToResolve,
  keptSecretField,
  maskedSecretIssues,
  validateRegistration,
  withKeptScheme
} from "./Registration.js"
import * as Replay from "./Replay.js"
import { SecretBox } from "./SecretBox.js"
import { validateRotation, withPrevious } from "./SecretRotation.js"
import {
  type OpenAuth,
  type SealedAuth,
  sealedSecretOf,
  secretContext,
  targetOf,
  toResponse,
  type Webhook,
  WebhookResponse
} from "./Webhook.js"
import { WebhookRepository } from "./WebhookRepository.js"

/**
 * No webhook with this id in the caller's workspace (404; another workspace's webhook looks the
 * same).
 * @since 0.1.0
 */
export class WebhookNotFound extends Schema.TaggedError<WebhookNotFound>("@waybill/webhooks/WebhookNotFound")(
  "WebhookNotFound",
  { webhookId: Schema.String, message: Schema.String }
) {
  /**
   * @since 0.1.0
   */
  static of(webhookId: string): WebhookNotFound {
    return new WebhookNotFound({ webhookId, message: `No webhook with id ${JSON.stringify(webhookId)} exists.` })
  }
}

/**
 * The workspace already holds as many webhooks as it may (409 `conflict`, contract §5): one event
 * fans out to at most that many.
 * @since 0.1.0
 */
export class WebhookLimitReached extends Schema.TaggedError<WebhookLimitReached>(
  "@waybill/webhooks/WebhookLimitReached"
)("WebhookLimitReached", { limit: Schema.Number, message: Schema.String }) {
  /**
   * @since 0.1.0
   */
  static of(limit: number): WebhookLimitReached {
    return new WebhookLimitReached({
      limit,
      message: `The workspace already has ${limit} webhooks, the most it may have; delete one before registering another.`
    })
  }
}

/**
 * How many webhooks a workspace may hold unless `Options.maxWebhooksPerWorkspace` says otherwise
 * (contract §5).
 * @since 0.1.0
 */
export const defaultMaxWebhooksPerWorkspace = 100

const Limit = Schema.NumberFromString.annotations({
  message: () => ({ message: "must be an integer", override: true })
})

/**
 * The query of `GET /webhooks` and `GET /webhooks/{id}/deliveries` (`?limit=&cursor=`).
 * @since 0.1.0
 */
export const ListParams = Schema.Struct({
  limit: Schema.optional(Limit),
  cursor: Schema.optional(Schema.String)
}).annotations({ identifier: "ListParams" })

/**
 * @since 0.1.0
 */
export type ListParams = typeof ListParams.Type

/**
 * The query of `GET /alerts` (`?webhookId=&limit=&cursor=`).
 * @since 0.1.0
 */
export const AlertListParams = Schema.Struct({
  webhookId: Schema.optional(Schema.String),
  limit: Schema.optional(Limit),
  cursor: Schema.optional(Schema.String)
}).annotations({ identifier: "AlertListParams" })

/**
 * @since 0.1.0
 */
export type AlertListParams = typeof AlertListParams.Type

/**
 * The query of `GET /webhooks/filter-fields` (`?event=`).
 * @since 0.1.0
 */
export const FilterFieldsParams = Schema.Struct({ event: Schema.optional(Schema.String) }).annotations({
  identifier: "FilterFieldsParams"
})

/**
 * @since 0.1.0
 */
export class WebhookService extends Context.Tag("@waybill/webhooks/WebhookService")<
  WebhookService,
  {
    /**
     * `POST /webhooks` → 201 with the masked webhook; every problem in one `ValidationError`; a
     * workspace already at its limit fails with `WebhookLimitReached` (409), nothing stored.
     */
    readonly register: (
      input: unknown
    ) => Effect.Effect<WebhookResponse, ValidationError.ValidationError | WebhookLimitReached, CurrentWorkspace>
    /**
     * `POST /webhooks` with an `Idempotency-Key` (contract §8): `register`, once per workspace
     * and key; the answer is kept in the transaction that stores the webhook. The same key and
     * body again replays it and registers nothing; see `Idempotency.run` for the rest.
     */
    readonly registerIdempotent: (
      input: unknown,
      key: string
    ) => Effect.Effect<
      Idempotency.Outcome<WebhookResponse>,
      | ValidationError.ValidationError
      | WebhookLimitReached
      | Idempotency.IdempotencyKeyReused
      | Idempotency.IdempotencyKeyInFlight,
      CurrentWorkspace | Idempotency.Idempotency
    >
    /** `GET /webhooks`: newest first; `limit` 1–100 (default 20). */
    readonly list: (
      params: Page.Params
    ) => Effect.Effect<Page.Page<WebhookResponse>, ValidationError.ValidationError, CurrentWorkspace>
    /** `GET /webhooks/{id}`. */
    readonly get: (id: string) => Effect.Effect<WebhookResponse, WebhookNotFound, CurrentWorkspace>
    /**
     * The console's edit (`PUT /console/api/webhooks/{id}`, contract §5): the body of
     * `POST /webhooks`, validated the same way, replaces the webhook's settings. A secret
     * omitted or sent as `"********"` keeps the stored one while the auth type is unchanged; a
     * changed type needs its secret; an HMAC webhook's `scheme`, when omitted, stays as stored.
     * A rotation's overlap goes on while the secret and scheme are kept; a new secret, type or
     * scheme ends it (the previous secret is deleted: use `rotate` to change a secret with an
     * overlap). The webhook keeps its id, delivery log and alerts; attempts
     * that start after the edit use the new URL and authentication.
     */
    readonly update: (
      id: string,
      input: unknown
    ) => Effect.Effect<WebhookResponse, WebhookNotFound | ValidationError.ValidationError, CurrentWorkspace>
    /**
     * `POST /webhooks/{id}/rotate` → 200 with the masked webhook (contract §8): new
     * authentication of the webhook's type and scheme. For HMAC, the replaced secret keeps
     * signing beside the new one for `overlapSeconds` (default 86 400; a previous secret of an
     * earlier rotation is dropped), and `auth.previousSecretExpiresAt` says until when; Basic
     * and Bearer credentials are replaced at once. Attempts that start after the rotation use
     * the new secrets, in every process.
     */
    readonly rotate: (
      id: string,
      input: unknown
    ) => Effect.Effect<WebhookResponse, WebhookNotFound | ValidationError.ValidationError, CurrentWorkspace>
    /**
     * `POST /webhooks/{id}/disable` → 200 with the masked webhook (contract §8; idempotent: a
     * disabled webhook stays as it is, reason and time included). From then on, in every
     * process, nothing is sent to it: its pending deliveries that are not in flight and the
     * ones its events make become `held`. An attempt in flight at that moment ends as usual.
     */
    readonly disable: (id: string) => Effect.Effect<WebhookResponse, WebhookNotFound, CurrentWorkspace>
    /**
     * `POST /webhooks/{id}/enable` → 200 with the masked webhook (idempotent). Its held
     * deliveries go back to `pending` in the same transaction, due now, and are sent in event
     * order with the usual cycle, each once, by whichever process claims them.
     */
    readonly enable: (id: string) => Effect.Effect<WebhookResponse, WebhookNotFound, CurrentWorkspace>
    /** `DELETE /webhooks/{id}` → 204; its pending deliveries go with it. */
    readonly delete: (id: string) => Effect.Effect<void, WebhookNotFound, CurrentWorkspace>
    /** `GET /webhooks/filter-fields?event=`: a missing or unknown type fails at `event`. */
    readonly filterFields: (
      event: string | undefined
    ) => Effect.Effect<ReadonlyArray<FilterField>, ValidationError.ValidationError, CurrentWorkspace>
    /** `GET /webhooks/{id}/deliveries`: the delivery log with attempts, newest first. */
    readonly deliveries: (
      id: string,
      params: Page.Params
    ) => Effect.Effect<Page.Page<DeliveryLog>, WebhookNotFound | ValidationError.ValidationError, CurrentWorkspace>
    /**
     * `POST /webhooks/{id}/deliveries/{deliveryId}/resend` → 202: a delivery that has succeeded
     * or failed goes back to `pending` with a fresh manual attempt cycle, sent to the webhook's
     * current URL and authentication with the same delivery id and body; attempts are numbered
     * on. A pending delivery fails with `DeliveryPending` (409).
     */
    readonly resend: (
      id: string,
      deliveryId: string
    ) => Effect.Effect<
      DeliveryLog,
      WebhookNotFound | Replay.DeliveryNotFound | Replay.DeliveryPending,
      CurrentWorkspace
    >
    /**
     * `POST /webhooks/{id}/replay` → 202: every delivery of the webhook whose event was created
     * in `[since, until)` and whose status matches (`failed` by default, or `all`) goes back to
     * `pending` with a fresh manual cycle, in event order, in bounded steps (one short
     * transaction each); pending ones are left alone. Answers how many went back.
     */
    readonly replay: (
      id: string,
      input: unknown
    ) => Effect.Effect<Replay.Replayed, WebhookNotFound | ValidationError.ValidationError, CurrentWorkspace>
    /**
     * `GET /webhooks/{id}/stats?hours=` (contract §8): the statistics of the webhook's
     * deliveries whose events were recorded in the last `hours` hours (1–168, default 24; else
     * a `ValidationError` at `hours`), with every hour of the window as a bucket, oldest first.
     */
    readonly stats: (
      id: string,
      params: DeliveryStats.StatsParams
    ) => Effect.Effect<DeliveryStats.DeliveryStats, WebhookNotFound | ValidationError.ValidationError, CurrentWorkspace>
    /** `GET /alerts`: an unknown or foreign `webhookId` gives an empty page. */
    readonly alerts: (
      params: Page.Params & { readonly webhookId?: string | undefined }
    ) => Effect.Effect<Page.Page<FailureAlert>, ValidationError.ValidationError, CurrentWorkspace>
  }
>() {}

/**
 * @since 0.1.0
 */
export interface Options {
  /** Allows `http://` and non-global targets (contract §7 `WAYBILL_ALLOW_PRIVATE_TARGETS`). */
  readonly allowPrivateTargets: boolean
  /** How long registration waits for the resolver before accepting the name; 5 s by default. */
  readonly resolveTimeoutMs?: number | undefined
  /** How far back a replay may reach (`since`), in seconds; 30 days by default. */
  readonly replayRetentionSeconds?: number | undefined
  /** Deliveries a replay looks at per step (one statement); 1 000 by default. */
  readonly replayStepSize?: number | undefined
  /**
   * How many webhooks a workspace may hold (a positive integer), so that one event fans out to at
   * most that many; `defaultMaxWebhooksPerWorkspace` (100) by default.
   */
  readonly maxWebhooksPerWorkspace?: number | undefined
}

const unchanged: unique symbol = Symbol("unchanged")

/**
 * Builds the service from its ports.
 * @since 0.1.0
 */
export const make = (options: Options) =>
  Effect.gen(function* () {
    const repository = yield* WebhookRepository
    const deliveryStore = yield* DeliveryStore.DeliveryStore
    const failureAlerts = yield* FailureAlerts
    const secretBox = yield* SecretBox
    const resolver = yield* HostResolver
    const propertyDefinitions = yield* PropertyDefinitions
    const transactor = yield* Transactor
    const resolveTimeout = options.resolveTimeoutMs ?? 5_000
    const retentionSeconds = options.replayRetentionSeconds ?? Replay.defaultRetentionSeconds
    const stepSize = Math.max(1, Math.floor(options.replayStepSize ?? Replay.defaultStepSize))
    const maxWebhooks = options.maxWebhooksPerWorkspace ?? defaultMaxWebhooksPerWorkspace
    if (!Number.isSafeInteger(maxWebhooks) || maxWebhooks < 1) {
      return yield* Effect.dieMessage(
        `WebhookService: maxWebhooksPerWorkspace must be a positive integer, not ${String(maxWebhooks)}`
      )
    }

    const resolveHost = (input: unknown): Effect.Effect<ReadonlyArray<string>> => {
      const host = hostToResolve(input)
      if (options.allowPrivateTargets || Option.isNone(host)) return Effect.succeed([])
      // A resolver that is slow or fails leaves the name to the connect-time check.
      return resolver
        .resolve(host.value)
        .pipe(Effect.timeoutOption(resolveTimeout), Effect.map(Option.getOrElse((): ReadonlyArray<string> => [])))
    }

    const seal = (id: string, auth: OpenAuth): Effect.Effect<SealedAuth> => {
      const context = secretContext(id, auth.type)
      switch (auth.type) {
        case "basic":
          return Effect.map(secretBox.seal(auth.password, context), (password) => ({
            type: "basic" as const,
            username: auth.username,
            password
          }))
        case "bearer":
          return Effect.map(secretBox.seal(auth.token, context), (token) => ({ type: "bearer" as const, token }))
        case "hmac":
          return Effect.map(secretBox.seal(auth.secret, context), (secret) => ({
            type: "hmac" as const,
            secret,
            scheme: auth.scheme
          }))
      }
    }

    const validate = (input: unknown, editIssues: ReadonlyArray<Issue.Issue> = []) =>
      Effect.gen(function* () {
        const workspace = yield* CurrentWorkspace
        const definitions = yield* propertyDefinitions.forWorkspace(workspace.id)
        const resolvedAddresses = yield* resolveHost(input)
        return yield* Either.match(
          validateRegistration(input, {
            propertyDefinitions: definitions,
            allowPrivateTargets: options.allowPrivateTargets,
            resolvedAddresses
          }),
          {
            onLeft: (issues) => Effect.fail(ValidationError.fromIssues([...issues, ...editIssues], "webhook")),
            onRight: (registration) =>
              editIssues.length === 0
                ? Effect.succeed(registration)
                : Effect.fail(ValidationError.fromIssues(editIssues, "webhook"))
          }
        )
      })

    const nowSeconds = Effect.map(Clock.currentTimeMillis, (millis) => Math.floor(millis / 1000))

    // A new webhook from a registration request, checked and sealed; nothing stored yet.
    const prepare = (input: unknown) =>
      Effect.gen(function* () {
        const workspace = yield* CurrentWorkspace
        const registration = yield* validate(input)
        const id = yield* Id.make("whk")
        return {
          id,
          workspaceId: workspace.id,
          url: registration.url,
          events: registration.events,
          filters: registration.filters,
          auth: yield* seal(id, registration.auth),
          description: registration.description,
          createdAt: yield* nowSeconds,
          revision: 1,
          status: "enabled",
          rateLimitPerSecond: registration.rateLimitPerSecond ?? null,
          ordering: registration.ordering ?? "none"
        } satisfies Webhook
      })

    // Stored only while the workspace is below its limit (the repository counts and inserts in
    // one step); at the limit nothing is stored, and no idempotent answer is kept either.
    const insertWithin = (webhook: Webhook) =>
      Effect.flatMap(repository.insert(webhook, maxWebhooks), (stored) =>
        stored ? Effect.void : Effect.fail(WebhookLimitReached.of(maxWebhooks))
      )

    const register = Effect.fn("WebhookService.register")(function* (input: unknown) {
      const webhook = yield* prepare(input)
      yield* insertWithin(webhook)
      return toResponse(webhook, webhook.createdAt)
    })

    const decodeResponse = Schema.decodeUnknownSync(WebhookResponse)
    const registerOnce = Idempotency.operation({
      operation: "POST /webhooks",
      create: (input, pending, store) =>
        Effect.gen(function* () {
          const webhook = yield* prepare(input)
          const response = toResponse(webhook, webhook.createdAt)
          return yield* Idempotency.complete(
            pending,
            { value: response, status: 201, body: JSON.stringify(response) },
            (record) => Idempotency.writeInTransaction(transactor, store, record, insertWithin(webhook))
          )
        }),
      // An answer kept before flow control existed lacks its fields: they were the defaults.
      replay: (record) =>
        decodeResponse({ status: "enabled", rateLimitPerSecond: null, ordering: "none", ...JSON.parse(record.body) })
    })
    const registerIdempotent = (input: unknown, key: string) =>
      registerOnce(input, key).pipe(Effect.withSpan("WebhookService.registerIdempotent"))

    const pageQuery = (prefix: Id.Prefix, params: Page.Params) => {
      const { issues, query } = Page.query(prefix, params)
      return issues.length > 0 ? Effect.fail(ValidationError.fromIssues(issues, "query")) : Effect.succeed(query)
    }

    const list = Effect.fn("WebhookService.list")(function* (params: Page.Params) {
      const workspace = yield* CurrentWorkspace
      const query = yield* pageQuery("whk", params)
      const page = yield* repository.list(workspace.id, query)
      const now = yield* nowSeconds
      return { data: page.data.map((webhook) => toResponse(webhook, now)), nextCursor: page.nextCursor }
    })

    const find = (id: string) =>
      Effect.flatMap(CurrentWorkspace, (workspace) =>
        Effect.flatMap(repository.get(workspace.id, id), (found) =>
          Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(WebhookNotFound.of(id))
        )
      )

    const get = Effect.fn("WebhookService.get")(function* (id: string) {
      return toResponse(yield* find(id), yield* nowSeconds)
    })

    // The request with the stored secret in place of one it leaves to the stored value, so the
    // edit is validated (and sealed again) exactly as a registration.
    const withKeptSecret = (current: Webhook, input: unknown) =>
      Option.match(keptSecretField(input, current.auth.type), {
        onNone: () => Effect.succeed(input),
        onSome: (field) =>
          Effect.map(
            secretBox
              .open(sealedSecretOf(current.auth), secretContext(current.id, current.auth.type))
              .pipe(Effect.orDie),
            (secret) => {
              const request = input as { readonly auth: Record<string, unknown> }
              return { ...request, auth: { ...request.auth, [field]: Redacted.value(secret) } }
            }
          )
      })

    // Stores a change computed from the stored webhook, and points its pending deliveries at
    // the result. When another change landed meanwhile (an edit, a rotation, the sweep: its
    // revision moved on), the webhook is read again and the change computed afresh, so none is
    // overwritten unseen; a webhook deleted meanwhile is not found.
    // A change that leaves the webhook as it is (`unchanged`) stores nothing. `after` runs in the
    // transaction that stored the change, with the webhook as stored.
    const change = <E>(
      id: string,
      compute: (current: Webhook) => Effect.Effect<Webhook | typeof unchanged, E, CurrentWorkspace>,
      after: (stored: Webhook) => Effect.Effect<void> = () => Effect.void
    ) =>
      Effect.gen(function* () {
        for (;;) {
          const current = yield* find(id)
          const changed = yield* compute(current)
          if (changed === unchanged) return current
          const stored = yield* transactor.withTransaction(
            Effect.tap(repository.update(changed), (updated) =>
              Option.match(updated, {
                onNone: () => Effect.void,
                onSome: (webhook) =>
                  Effect.zipRight(deliveryStore.retarget(webhook.workspaceId, targetOf(webhook)), after(webhook))
              })
            )
          )
          if (Option.isSome(stored)) return stored.value
        }
      })

    const update = Effect.fn("WebhookService.update")(function* (id: string, input: unknown) {
      const stored = yield* change(id, (current) =>
        Effect.gen(function* () {
          const registration = yield* validate(
            yield* withKeptSecret(current, withKeptScheme(input, current.auth)),
            maskedSecretIssues(input, current.auth.type)
          )
          const sealed = yield* seal(id, registration.auth)
          // An overlap goes on only for the same secret signing the same way.
          const keepsOverlap =
            current.auth.type === "hmac" &&
            sealed.type === "hmac" &&
            sealed.scheme === current.auth.scheme &&
            current.auth.previous !== undefined &&
            Option.isSome(keptSecretField(input, current.auth.type))
          return {
            ...current,
            url: registration.url,
            events: registration.events,
            filters: registration.filters,
            auth:
              keepsOverlap && current.auth.type === "hmac" ? { ...sealed, previous: current.auth.previous } : sealed,
            description: registration.description,
            // Omitted in an edit: as stored.
            rateLimitPerSecond:
              registration.rateLimitPerSecond === undefined
                ? current.rateLimitPerSecond
                : registration.rateLimitPerSecond,
            ordering: registration.ordering ?? current.ordering
          } satisfies Webhook
        })
      )
      return toResponse(stored, yield* nowSeconds)
    })

    const disable = Effect.fn("WebhookService.disable")(function* (id: string) {
      const now = yield* Clock.currentTimeMillis
      const stored = yield* change(
        id,
        (current) =>
          Effect.succeed(
            current.status === "disabled"
              ? unchanged
              : ({
                  ...current,
                  status: "disabled",
                  disabledReason: "manual",
                  disabledAt: Math.floor(now / 1000)
                } satisfies Webhook)
          ),
        (webhook) => deliveryStore.hold(webhook.workspaceId, webhook.id, now)
      )
      return toResponse(stored, Math.floor(now / 1000))
    })

    const enable = Effect.fn("WebhookService.enable")(function* (id: string) {
      const now = yield* Clock.currentTimeMillis
      const stored = yield* change(
        id,
        (current) => {
          if (current.status === "enabled") return Effect.succeed(unchanged)
          const { disabledReason: _reason, disabledAt: _at, ...rest } = current
          return Effect.succeed({ ...rest, status: "enabled" } satisfies Webhook)
        },
        (webhook) => deliveryStore.release(webhook.workspaceId, webhook.id, now)
      )
      return toResponse(stored, Math.floor(now / 1000))
    })

    const rotate = Effect.fn("WebhookService.rotate")(function* (id: string, input: unknown) {
      const now = yield* nowSeconds
      const stored = yield* change(id, (current) =>
        Effect.gen(function* () {
          const rotation = yield* Either.match(validateRotation(input, current.auth), {
            onLeft: (issues) => Effect.fail(ValidationError.fromIssues(issues, "rotation")),
            onRight: Effect.succeed
          })
          const auth = yield* withPrevious(secretBox, {
            webhookId: id,
            replaced: current.auth,
            rotated: yield* seal(id, rotation.auth),
            overlapSeconds: rotation.overlapSeconds,
            now
          })
          return { ...current, auth } satisfies Webhook
        })
      )
      return toResponse(stored, now)
    })

    const remove = Effect.fn("WebhookService.delete")(function* (id: string) {
      const workspace = yield* CurrentWorkspace
      const removed = yield* transactor.withTransaction(
        Effect.flatMap(repository.delete(workspace.id, id), (removed) =>
          removed ? Effect.as(deliveryStore.deleteForWebhook(workspace.id, id), true) : Effect.succeed(false)
        )
      )
      if (!removed) return yield* Effect.fail(WebhookNotFound.of(id))
    })

    const filterFields = Effect.fn("WebhookService.filterFields")(function* (event: string | undefined) {
      const workspace = yield* CurrentWorkspace
      if (event === undefined || event === "") {
        return yield* Effect.fail(ValidationError.fromIssues([Issue.make("event", "is required")], "query"))
      }
      if (!isEventType(event)) {
        return yield* Effect.fail(ValidationError.fromIssues([Issue.make("event", notInCatalogue(event))], "query"))
      }
      return catalogueFields(event, yield* propertyDefinitions.forWorkspace(workspace.id))
    })

    const deliveryLog = DeliveryLogOperations.make({
      find,
      pageQuery,
      deliveryStore,
      failureAlerts,
      retentionSeconds,
      stepSize
    })

    return WebhookService.of({
      register,
      registerIdempotent,
      update,
      rotate,
      disable,
      enable,
      list,
      get,
      delete: remove,
      filterFields,
      ...deliveryLog
    })
  })

/**
 * The service over its ports.
 * @since 0.1.0
 */
export const layer = (
  options: Options
): Layer.Layer<
  WebhookService,
  never,
  | WebhookRepository
  | DeliveryStore.DeliveryStore
  | FailureAlerts
  | SecretBox
  | HostResolver
  | PropertyDefinitions
  | Transactor
> => Layer.effect(WebhookService, make(options))
