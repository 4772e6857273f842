// The webhook service's operations on webhooks themselves: register, list, get, edit, delete,
// and the filter fields a registration may use.
import * as Id from "@waybill/core/Id"
import * as Idempotency from "@waybill/core/Idempotency"
import * as Issue from "@waybill/core/Issue"
import * as ValidationError from "@waybill/core/ValidationError"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import { isEventType, notInCatalogue } from "@waybill/events/EventType"
import { filterFields as catalogueFields } from "@waybill/events/FilterFields"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Page from "../Page.js"
import {
  hostToResolve,
  keptSecretField,
  maskedSecretIssues,
  validateRegistration,
  withKeptScheme
} from "../Registration.js"
import { toResponse, type Webhook, WebhookResponse } from "../Webhook.js"
import { answer, answers, change, type Env, find, nowSeconds, pageQuery } from "./env.js"
import { WebhookLimitReached, WebhookNotFound } from "./errors.js"
import { seal, withKeptSecret } from "./secrets.js"

/** The operations on webhooks over `env`. */
export const make = (env: Env) => {
  const { repository, transactor, settings } = env

  const resolveHost = (input: unknown): Effect.Effect<ReadonlyArray<string>> => {
    const host = hostToResolve(input)
    if (settings.allowPrivateTargets || Option.isNone(host)) return Effect.succeed([])
    // A resolver that is slow or fails leaves the name to the connect-time check.
    return env.resolver
      .resolve(host.value)
      .pipe(
        Effect.timeoutOption(settings.resolveTimeoutMs),
        Effect.map(Option.getOrElse((): ReadonlyArray<string> => []))
      )
  }

  const validate = (input: unknown, editIssues: ReadonlyArray<Issue.Issue> = []) =>
    Effect.gen(function* () {
      const workspace = yield* CurrentWorkspace
      const definitions = yield* env.propertyDefinitions.forWorkspace(workspace.id)
      const resolvedAddresses = yield* resolveHost(input)
      return yield* Either.match(
        validateRegistration(input, {
          propertyDefinitions: definitions,
          allowPrivateTargets: settings.allowPrivateTargets,
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
        auth: yield* seal(env, id, registration.auth),
        description: registration.description,
        createdAt: yield* nowSeconds,
        revision: 1,
        status: "enabled",
        rateLimitPerSecond: registration.rateLimitPerSecond ?? null,
        ordering: registration.ordering ?? "none"
      } satisfies Webhook
    })

  // The repository counts and inserts in one step: at the limit nothing is stored, and no
  // idempotent answer is kept either.
  const insertWithin = (webhook: Webhook) =>
    Effect.flatMap(repository.insert(webhook, settings.maxWebhooks), (stored) =>
      stored ? Effect.void : Effect.fail(WebhookLimitReached.of(settings.maxWebhooks))
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

  const list = Effect.fn("WebhookService.list")(function* (params: Page.Params) {
    const workspace = yield* CurrentWorkspace
    const query = yield* pageQuery("whk", params)
    const page = yield* repository.list(workspace.id, query)
    return { data: yield* answers(env, workspace.id, page.data, yield* nowSeconds), nextCursor: page.nextCursor }
  })

  const get = Effect.fn("WebhookService.get")(function* (id: string) {
    return yield* answer(env, yield* find(env, id), yield* nowSeconds)
  })

  const update = Effect.fn("WebhookService.update")(function* (id: string, input: unknown) {
    const stored = yield* change(env, id, (current) =>
      Effect.gen(function* () {
        const registration = yield* validate(
          yield* withKeptSecret(env, current, withKeptScheme(input, current.auth)),
          maskedSecretIssues(input, current.auth.type)
        )
        const sealed = yield* seal(env, id, registration.auth)
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
          auth: keepsOverlap && current.auth.type === "hmac" ? { ...sealed, previous: current.auth.previous } : sealed,
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
    return yield* answer(env, stored, yield* nowSeconds)
  })

  const remove = Effect.fn("WebhookService.delete")(function* (id: string) {
    const workspace = yield* CurrentWorkspace
    const removed = yield* transactor.withTransaction(
      Effect.flatMap(repository.delete(workspace.id, id), (removed) =>
        removed ? Effect.as(env.deliveryStore.deleteForWebhook(workspace.id, id), true) : Effect.succeed(false)
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
    return catalogueFields(event, yield* env.propertyDefinitions.forWorkspace(workspace.id))
  })

  return { register, registerIdempotent, list, get, update, delete: remove, filterFields }
}
