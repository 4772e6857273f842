// What the webhook service's operations share: its ports and settings, how they find a webhook of
// the caller's workspace, and how they store a change to one.
import type * as Id from "@waybill/core/Id"
import { Transactor } from "@waybill/core/Transactor"
import * as ValidationError from "@waybill/core/ValidationError"
import { CurrentWorkspace, type WorkspaceId } from "@waybill/core/Workspace"
import { PropertyDefinitions } from "@waybill/events/PropertyDefinition"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { DeliveryStore, type HeldDeliveries } from "../DeliveryStore.js"
import { FailureAlerts } from "../FailureAlerts.js"
import { HostResolver } from "../HostResolver.js"
import * as Page from "../Page.js"
import * as Retention from "../Retention.js"
import { SecretBox } from "../SecretBox.js"
import { heldExpiresAt, targetOf, toResponse, type Webhook, type WebhookResponse } from "../Webhook.js"
import { WebhookRepository } from "../WebhookRepository.js"
import { WebhookNotFound } from "./errors.js"

/** `WebhookService.Options`, resolved. */
export interface Settings {
  readonly allowPrivateTargets: boolean
  readonly resolveTimeoutMs: number
  readonly stepSize: number
  readonly maxWebhooks: number
  readonly concurrentStatsReads: number
}

/** The service's settings and ports. */
export interface Env {
  readonly settings: Settings
  readonly repository: WebhookRepository["Type"]
  readonly deliveryStore: DeliveryStore["Type"]
  readonly failureAlerts: FailureAlerts["Type"]
  readonly secretBox: SecretBox["Type"]
  readonly resolver: HostResolver["Type"]
  readonly propertyDefinitions: PropertyDefinitions["Type"]
  readonly transactor: Transactor["Type"]
}

/** The ports in context, with `settings`. */
export const make = (settings: Settings) =>
  Effect.gen(function* () {
    return {
      settings,
      repository: yield* WebhookRepository,
      deliveryStore: yield* DeliveryStore,
      failureAlerts: yield* FailureAlerts,
      secretBox: yield* SecretBox,
      resolver: yield* HostResolver,
      propertyDefinitions: yield* PropertyDefinitions,
      transactor: yield* Transactor
    } satisfies Env
  })

export const nowSeconds = Effect.map(Clock.currentTimeMillis, (millis) => Math.floor(millis / 1000))

/** The page a list request asks for, or its issues at `query`. */
export const pageQuery = (prefix: Id.Prefix, params: Page.Params) => {
  const { issues, query } = Page.query(prefix, params)
  return issues.length > 0 ? Effect.fail(ValidationError.fromIssues(issues, "query")) : Effect.succeed(query)
}

/** The webhook with this id in the caller's workspace. */
export const find = (env: Env, id: string) =>
  Effect.flatMap(CurrentWorkspace, (workspace) =>
    Effect.flatMap(env.repository.get(workspace.id, id), (found) =>
      Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(WebhookNotFound.of(id))
    )
  )

/**
 * The answers for webhooks of one workspace as of `now` (epoch s): each disabled one that holds
 * deliveries shows how many and when the oldest of them expires under the retention in context
 * (`Retention.Window`). One read for the whole page, and none when no webhook on it is disabled
 * (deliveries are held only while their webhook is: `hold` and `release` run in the transaction
 * that changes its status).
 */
export const answers = (
  env: Env,
  workspaceId: WorkspaceId,
  webhooks: ReadonlyArray<Webhook>,
  now: number
): Effect.Effect<Array<WebhookResponse>> =>
  Effect.gen(function* () {
    const disabled = webhooks.filter((webhook) => webhook.status === "disabled").map((webhook) => webhook.id)
    const { retentionMs } = yield* Retention.Window
    const holding =
      disabled.length === 0 ? new Map<string, HeldDeliveries>() : yield* env.deliveryStore.held(workspaceId, disabled)
    return webhooks.map((webhook) => {
      const held = holding.get(webhook.id)
      return held === undefined
        ? toResponse(webhook, now)
        : toResponse(webhook, now, heldExpiresAt(held.oldestId, retentionMs), held.count)
    })
  })

/** The answer for one webhook as of `now` (epoch s): see `answers`. */
export const answer = (env: Env, webhook: Webhook, now: number): Effect.Effect<WebhookResponse> =>
  Effect.map(answers(env, webhook.workspaceId, [webhook], now), (answered) => answered[0]!)

/** What a change computes when it leaves the webhook as it is: nothing is stored. */
export const unchanged: unique symbol = Symbol("unchanged")

/**
 * Stores a change computed from the stored webhook and points its pending deliveries at the
 * result; `after` runs in the same transaction, with the webhook as stored. When another change
 * landed meanwhile (its revision moved on), the change is computed afresh from the webhook read
 * again, so none is overwritten unseen.
 */
export const change = <E>(
  env: Env,
  id: string,
  compute: (current: Webhook) => Effect.Effect<Webhook | typeof unchanged, E, CurrentWorkspace>,
  after: (stored: Webhook) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.gen(function* () {
    for (;;) {
      const current = yield* find(env, id)
      const changed = yield* compute(current)
      if (changed === unchanged) return current
      const stored = yield* env.transactor.withTransaction(
        Effect.tap(env.repository.update(changed), (updated) =>
          Option.match(updated, {
            onNone: () => Effect.void,
            onSome: (webhook) =>
              Effect.zipRight(env.deliveryStore.retarget(webhook.workspaceId, targetOf(webhook)), after(webhook))
          })
        )
      )
      if (Option.isSome(stored)) return stored.value
    }
  })
