/**
 * The webhook service behind the `/webhooks` and `/alerts` endpoints, over its ports. Every method
 * acts in the caller's `CurrentWorkspace` (another workspace's webhook is not found); responses
 * mask every secret. The retention (`Retention.Window`, 30 days unless the caller's context says
 * otherwise) bounds a replay's `since` and gives a disabled webhook's `oldestHeldExpiresAt`.
 * @since 0.1.0
 */
import type * as Idempotency from "@waybill/core/Idempotency"
import type { Transactor } from "@waybill/core/Transactor"
import type * as ValidationError from "@waybill/core/ValidationError"
import type { CurrentWorkspace } from "@waybill/core/Workspace"
import type { PropertyDefinitions } from "@waybill/events/PropertyDefinition"
import type { FilterField } from "@waybill/filters/FilterField"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { DeliveryLog } from "./Delivery.js"
import type * as DeliveryStats from "./DeliveryStats.js"
import type * as DeliveryStore from "./DeliveryStore.js"
import type { FailureAlert, FailureAlerts } from "./FailureAlerts.js"
import type { HostResolver } from "./HostResolver.js"
import type * as Page from "./Page.js"
import * as Replay from "./Replay.js"
import type { SecretBox } from "./SecretBox.js"
import * as DeliveryLogOperations from "./service/deliveryLog.js"
import * as Env from "./service/env.js"
import type { WebhookLimitReached, WebhookNotFound } from "./service/errors.js"
import * as Secrets from "./service/secrets.js"
import * as Status from "./service/status.js"
import * as Webhooks from "./service/webhooks.js"
import type { WebhookResponse } from "./Webhook.js"
import type { WebhookRepository } from "./WebhookRepository.js"

/**
 * The service's errors: `WebhookNotFound` (404; another workspace's webhook looks the same) and
 * `WebhookLimitReached` (409 `conflict`: the workspace holds as many webhooks as it may).
 * @since 0.1.0
 */
export { WebhookLimitReached, WebhookNotFound } from "./service/errors.js"

/** How many webhooks a workspace may hold unless `Options.maxWebhooksPerWorkspace` says otherwise. @since 0.1.0 */
export const defaultMaxWebhooksPerWorkspace = 100

const Limit = Schema.NumberFromString.annotations({
  message: () => ({ message: "must be an integer", override: true })
})

/** The query of `GET /webhooks` and `GET /webhooks/{id}/deliveries` (`?limit=&cursor=`). @since 0.1.0 */
export const ListParams = Schema.Struct({
  limit: Schema.optional(Limit),
  cursor: Schema.optional(Schema.String)
}).annotations({ identifier: "ListParams" })

/** @since 0.1.0 */
export type ListParams = typeof ListParams.Type

/** The query of `GET /alerts` (`?webhookId=&limit=&cursor=`). @since 0.1.0 */
export const AlertListParams = Schema.Struct({
  webhookId: Schema.optional(Schema.String),
  limit: Schema.optional(Limit),
  cursor: Schema.optional(Schema.String)
}).annotations({ identifier: "AlertListParams" })

/** @since 0.1.0 */
export type AlertListParams = typeof AlertListParams.Type

/** The query of `GET /webhooks/filter-fields` (`?event=`). @since 0.1.0 */
export const FilterFieldsParams = Schema.Struct({ event: Schema.optional(Schema.String) }).annotations({
  identifier: "FilterFieldsParams"
})

/** The operations behind the `/webhooks` and `/alerts` endpoints. @since 0.1.0 */
export class WebhookService extends Context.Tag("@waybill/webhooks/WebhookService")<
  WebhookService,
  {
    /**
     * `POST /webhooks` → 201 with the masked webhook; every problem in one `ValidationError`; a
     * workspace at its limit fails with `WebhookLimitReached` (409), nothing stored.
     */
    readonly register: (
      input: unknown
    ) => Effect.Effect<WebhookResponse, ValidationError.ValidationError | WebhookLimitReached, CurrentWorkspace>
    /**
     * `register` once per workspace and `Idempotency-Key`, the answer kept in the transaction that
     * stores the webhook; the same key and body again replays it (`Idempotency.run`).
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
    /**
     * `GET /webhooks`: newest first; `limit` 1–100 (default 20). A disabled webhook holding
     * deliveries answers `heldDeliveries` and `oldestHeldExpiresAt` (one read of the delivery
     * store for the page).
     */
    readonly list: (
      params: Page.Params
    ) => Effect.Effect<Page.Page<WebhookResponse>, ValidationError.ValidationError, CurrentWorkspace>
    /** `GET /webhooks/{id}`. */
    readonly get: (id: string) => Effect.Effect<WebhookResponse, WebhookNotFound, CurrentWorkspace>
    /**
     * The console's edit (`PUT /console/api/webhooks/{id}`): a `POST /webhooks` body replaces the
     * webhook's settings; a secret omitted or sent as `"********"` keeps the stored one (see
     * docs/webhooks.md for the auth type, scheme and a rotation's overlap).
     */
    readonly update: (
      id: string,
      input: unknown
    ) => Effect.Effect<WebhookResponse, WebhookNotFound | ValidationError.ValidationError, CurrentWorkspace>
    /**
     * `POST /webhooks/{id}/rotate` → 200 with the masked webhook: new authentication of the same
     * type; an HMAC secret replaced keeps signing beside the new one for `overlapSeconds`.
     */
    readonly rotate: (
      id: string,
      input: unknown
    ) => Effect.Effect<WebhookResponse, WebhookNotFound | ValidationError.ValidationError, CurrentWorkspace>
    /**
     * `POST /webhooks/{id}/disable` → 200 with the masked webhook (idempotent): from then on, in
     * every process, nothing is sent to it; its waiting deliveries become `held`.
     */
    readonly disable: (id: string) => Effect.Effect<WebhookResponse, WebhookNotFound, CurrentWorkspace>
    /**
     * `POST /webhooks/{id}/enable` → 200 with the masked webhook (idempotent): its held deliveries
     * go back to `pending`, due now, in the same transaction.
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
     * `POST /webhooks/{id}/deliveries/{deliveryId}/resend` → 202: a delivery that has ended goes
     * back to `pending` with a fresh manual cycle; a pending one fails with `DeliveryPending` (409).
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
     * `POST /webhooks/{id}/replay` → 202: the webhook's failed (or, with `all`, ended) deliveries
     * whose events fall in `[since, until)` go back to `pending`; answers how many went back.
     * `since` older than the retention (`Retention.Window`; none with 0) fails at `since`.
     */
    readonly replay: (
      id: string,
      input: unknown
    ) => Effect.Effect<Replay.Replayed, WebhookNotFound | ValidationError.ValidationError, CurrentWorkspace>
    /**
     * `GET /webhooks/{id}/stats?hours=`: the statistics of the deliveries whose events were
     * recorded in the last `hours` hours (1–168, default 24), one bucket per hour, oldest first.
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

/** The service's settings; all but `allowPrivateTargets` have a default. @since 0.1.0 */
export interface Options {
  /** Allows `http://` and non-global targets (`WAYBILL_ALLOW_PRIVATE_TARGETS`). */
  readonly allowPrivateTargets: boolean
  /** How long registration waits for the resolver before accepting the name; 5 s by default. */
  readonly resolveTimeoutMs?: number | undefined
  /** Deliveries a replay looks at per step (one statement); 1 000 by default. */
  readonly replayStepSize?: number | undefined
  /** How many webhooks a workspace may hold (a positive integer); `defaultMaxWebhooksPerWorkspace` by default. */
  readonly maxWebhooksPerWorkspace?: number | undefined
  /**
   * How many statistics reads run at once in this process (a positive integer); 1 by default.
   * The others wait their turn, and requests for a window being read join that read.
   */
  readonly concurrentStatsReads?: number | undefined
}

/** Builds the service from its ports. @since 0.1.0 */
export const make = (options: Options) =>
  Effect.gen(function* () {
    const maxWebhooks = options.maxWebhooksPerWorkspace ?? defaultMaxWebhooksPerWorkspace
    const concurrentStatsReads = options.concurrentStatsReads ?? 1
    for (const [name, value] of Object.entries({ maxWebhooksPerWorkspace: maxWebhooks, concurrentStatsReads })) {
      if (!Number.isSafeInteger(value) || value < 1) {
        return yield* Effect.dieMessage(`WebhookService: ${name} must be a positive integer, not ${String(value)}`)
      }
    }
    const env = yield* Env.make({
      allowPrivateTargets: options.allowPrivateTargets,
      resolveTimeoutMs: options.resolveTimeoutMs ?? 5_000,
      stepSize: Math.max(1, Math.floor(options.replayStepSize ?? Replay.defaultStepSize)),
      maxWebhooks,
      concurrentStatsReads
    })
    return WebhookService.of({
      ...Webhooks.make(env),
      rotate: Secrets.makeRotate(env),
      ...Status.make(env),
      ...DeliveryLogOperations.make(env)
    })
  })

/** The service over its ports. @since 0.1.0 */
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
