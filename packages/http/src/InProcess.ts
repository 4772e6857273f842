/**
 * One workspace's API in process (contract §9): every route a workspace has, as Promise-returning
 * functions over the operations the HTTP routes run, with their rules, defaults, events and answers,
 * without HTTP and without an API key. A refusal rejects with a `WaybillError`.
 * @since 0.3.0
 */
import { Availability } from "@waybill/core/Availability"
import type { ConsoleTokenInfo, ConsoleTokenScope } from "@waybill/core/ConsoleTokens"
import type { Issue } from "@waybill/core/Issue"
import * as TraceContext from "@waybill/core/TraceContext"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import type { CreateDraft } from "@waybill/drafts/CreateDraft"
import type { ActionRequest, ActionResult, Actor, Draft } from "@waybill/drafts/Draft"
import type { ListParams as DraftListParams } from "@waybill/drafts/DraftService"
import type { ExecuteRequest, ExecuteResult } from "@waybill/drafts/ProductEvaluator"
import type { Product, TransportShape } from "@waybill/drafts/ReferenceData"
import { traceparentIssue } from "@waybill/events/EventIntake"
import type { FilterField } from "@waybill/filters/FilterField"
import type { Tour } from "@waybill/recurring/Tour"
import type { ListParams as TourListParams, TourPage } from "@waybill/recurring/TourQuery"
import type { VehicleClass } from "@waybill/recurring/VehicleClass"
import type { DeliveryLog } from "@waybill/webhooks/Delivery"
import type { DeliveryStats, StatsParams } from "@waybill/webhooks/DeliveryStats"
import type { FailureAlert } from "@waybill/webhooks/FailureAlerts"
import type { Replayed, ReplayRequest } from "@waybill/webhooks/Replay"
import type { RotateSecret } from "@waybill/webhooks/SecretRotation"
import type { RegisterWebhook, WebhookResponse } from "@waybill/webhooks/Webhook"
import type { AlertListParams, FilterFieldsParams, ListParams } from "@waybill/webhooks/WebhookService"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import type { MintedConsoleToken } from "./ConsoleTokensApi.js"
import type { OccurrencesPage, OccurrencesParams } from "./DraftsApi.js"
import type { Requirements } from "./Http.js"
import { type Call, operationsCaller } from "./internal/inProcessCall.js"
import { WaybillError } from "./WaybillError.js"

type Json<S extends Schema.Schema.Any> = Schema.Schema.Encoded<S>

/** A query as the HTTP route reads it: each parameter as its value, a number, or the text of the URL. @since 0.3.0 */
export type Query<S extends Schema.Schema.Any> = {
  readonly [K in keyof Schema.Schema.Type<S>]?: Schema.Schema.Type<S>[K] | string | number | undefined
}

/** A page of a list, newest first; `nextCursor` reads the next one. @since 0.3.0 */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly nextCursor: string | null
}

/** An event to publish: `POST /events`' body. @since 0.3.0 */
export interface PublishEvent {
  /** A catalogue event type (`tour-created`, …). */
  readonly type: string
  /** The payload of that type, checked and redacted as `POST /events` does. */
  readonly payload: unknown
  /** Deliveries of events with the same key are made in order to a webhook with `"ordering": "key"`. */
  readonly orderingKey?: string | undefined
  /** The W3C `traceparent` the event belongs to: the host's own trace, for its deliveries' spans. */
  readonly traceparent?: string | undefined
}

/** The answer of a publish: the event's id. @since 0.3.0 */
export interface Published {
  readonly id: string
}

/** What a console token is minted with: `POST /console/tokens`' body (contract §5). @since 0.3.0 */
export interface ConsoleTokenRequest {
  /** Its lifetime, 60 to 604800 seconds; one hour by default. */
  readonly ttlSeconds?: number | undefined
  /** `read`: the console's pages; `manage` (the default): also changing webhooks. */
  readonly scope?: ConsoleTokenScope | undefined
  /** Whom or what it is for, at most 100 characters (shown in the list, never used to check it). */
  readonly label?: string | undefined
}

/** One workspace's API in process (contract §9). Every function rejects with a `WaybillError` when refused. @since 0.3.0 */
export interface WorkspaceApi {
  readonly workspaceId: string
  /**
   * `POST /console/tokens`: a console token of this workspace for one of the host's users; its
   * `url` (`<basePath>/console#token=wbc_…`) opens the console signed in with it.
   */
  readonly consoleToken: (request?: ConsoleTokenRequest) => Promise<Json<typeof MintedConsoleToken>>
  readonly consoleTokens: {
    /** `GET /console/tokens`: the live tokens, newest first, without their values. */
    readonly list: () => Promise<{ readonly data: ReadonlyArray<Json<typeof ConsoleTokenInfo>> }>
    /** `DELETE /console/tokens/{id}`: the token refused from its next request on. */
    readonly revoke: (id: string) => Promise<void>
  }
  readonly events: {
    /** `POST /events`: the event recorded and delivered like one the service raises; `idempotencyKey` as the header. */
    readonly publish: (event: PublishEvent & { readonly idempotencyKey?: string | undefined }) => Promise<Published>
  }
  readonly drafts: {
    /** `POST /drafts`: the draft created (201), its events raised. */
    readonly create: (
      body: Json<typeof CreateDraft>,
      options?: { readonly idempotencyKey?: string | undefined }
    ) => Promise<Json<typeof Draft>>
    readonly get: (id: string) => Promise<Json<typeof Draft>>
    readonly list: (query?: Query<typeof DraftListParams>) => Promise<Page<Json<typeof Draft>>>
    /** `POST /drafts/{id}/actions`, recorded with `actor` (the host's user), `{ type: "host", id: "in-process" }` by default. */
    readonly act: (
      id: string,
      body: Json<typeof ActionRequest>,
      options?: { readonly actor?: Actor | undefined }
    ) => Promise<Json<typeof ActionResult>>
    readonly delete: (id: string) => Promise<void>
    readonly occurrences: (id: string, query?: Query<typeof OccurrencesParams>) => Promise<Json<typeof OccurrencesPage>>
  }
  readonly products: {
    /** `GET /products`. */
    readonly list: () => Promise<{ readonly data: ReadonlyArray<Json<typeof Product>> }>
    /** `POST /products/{productId}/execute`: a draft's transport evaluated for a product. */
    readonly execute: (productId: string, body: Json<typeof ExecuteRequest>) => Promise<Json<typeof ExecuteResult>>
  }
  readonly referenceData: {
    readonly transportShapes: () => Promise<{ readonly data: ReadonlyArray<Json<typeof TransportShape>> }>
    readonly vehicleClasses: () => Promise<{ readonly data: ReadonlyArray<Json<typeof VehicleClass>> }>
  }
  readonly tours: {
    readonly get: (id: string) => Promise<Json<typeof Tour>>
    readonly list: (query?: Query<typeof TourListParams>) => Promise<Json<typeof TourPage>>
  }
  readonly webhooks: {
    /** `POST /webhooks` (201); secrets come back masked. */
    readonly create: (
      body: Json<typeof RegisterWebhook>,
      options?: { readonly idempotencyKey?: string | undefined }
    ) => Promise<Json<typeof WebhookResponse>>
    readonly list: (query?: Query<typeof ListParams>) => Promise<Page<Json<typeof WebhookResponse>>>
    readonly get: (id: string) => Promise<Json<typeof WebhookResponse>>
    /** The operator console's edit in place (`PUT /console/api/webhooks/{id}`): a whole registration. */
    readonly update: (id: string, body: Json<typeof RegisterWebhook>) => Promise<Json<typeof WebhookResponse>>
    readonly delete: (id: string) => Promise<void>
    readonly disable: (id: string) => Promise<Json<typeof WebhookResponse>>
    readonly enable: (id: string) => Promise<Json<typeof WebhookResponse>>
    readonly rotate: (id: string, body: Json<typeof RotateSecret>) => Promise<Json<typeof WebhookResponse>>
    readonly stats: (id: string, query?: Query<typeof StatsParams>) => Promise<Json<typeof DeliveryStats>>
    readonly deliveries: (id: string, query?: Query<typeof ListParams>) => Promise<Page<Json<typeof DeliveryLog>>>
    readonly resend: (id: string, deliveryId: string) => Promise<Json<typeof DeliveryLog>>
    readonly replay: (id: string, body: Json<typeof ReplayRequest>) => Promise<Json<typeof Replayed>>
    /** `GET /webhooks/filter-fields`: the fields a filter may use for one event type. */
    readonly filterFields: (
      query?: Query<typeof FilterFieldsParams>
    ) => Promise<{ readonly data: ReadonlyArray<Json<typeof FilterField>> }>
    /** `GET /alerts`: deliveries that failed after their retry. */
    readonly alerts: (query?: Query<typeof AlertListParams>) => Promise<Page<Json<typeof FailureAlert>>>
  }
}

/**
 * Which endpoint of the API each function calls (`group.endpoint`): every endpoint a workspace has
 * appears once; only the system group's health checks and the console's sign-in check
 * (`console.whoami`, about the credential a request came with) do not.
 * @since 0.3.0
 */
export const endpoints = {
  consoleToken: "consoleTokens.create",
  "consoleTokens.list": "consoleTokens.list",
  "consoleTokens.revoke": "consoleTokens.revoke",
  "events.publish": "webhooks.publish",
  "drafts.create": "drafts.create",
  "drafts.get": "drafts.get",
  "drafts.list": "drafts.list",
  "drafts.act": "drafts.act",
  "drafts.delete": "drafts.delete",
  "drafts.occurrences": "drafts.occurrences",
  "products.list": "referenceData.products",
  "products.execute": "products.execute",
  "referenceData.transportShapes": "referenceData.transportShapes",
  "referenceData.vehicleClasses": "referenceData.vehicleClasses",
  "tours.get": "tours.get",
  "tours.list": "tours.list",
  "webhooks.create": "webhooks.register",
  "webhooks.list": "webhooks.list",
  "webhooks.get": "webhooks.get",
  "webhooks.update": "console.updateWebhook",
  "webhooks.delete": "webhooks.delete",
  "webhooks.disable": "webhooks.disable",
  "webhooks.enable": "webhooks.enable",
  "webhooks.rotate": "webhooks.rotate",
  "webhooks.stats": "webhooks.stats",
  "webhooks.deliveries": "webhooks.deliveries",
  "webhooks.resend": "webhooks.resend",
  "webhooks.replay": "webhooks.replay",
  "webhooks.filterFields": "webhooks.filterFields",
  "webhooks.alerts": "webhooks.alerts"
} as const

/** The actor of an action taken in process when the host names none. @since 0.3.0 */
export const hostActor: Actor = { type: "host", id: "in-process" }

const decodeWorkspaceId = Schema.decodeUnknownOption(WorkspaceId)

/** The `WaybillError` of a bad workspace id given to `forWorkspace`. @since 0.3.0 */
export const badWorkspaceId = (id: unknown): WaybillError => {
  const issues: ReadonlyArray<Issue> = [
    {
      path: "workspaceId",
      message:
        typeof id === "string"
          ? "must be 1 to 64 characters: letters, digits, '_', '.' or '-', starting with a letter or digit"
          : "must be a string"
    }
  ]
  return new WaybillError({ status: 400, message: "The workspace id is not valid", issues })
}

const PUBLISH_FIELDS = new Set(["idempotencyKey", "traceparent"])

// `publish`'s argument without the fields `POST /events` takes from headers.
const bodyOfPublish = (event: unknown): unknown => {
  if (typeof event !== "object" || event === null || Array.isArray(event)) return event
  return Object.fromEntries(Object.entries(event).filter(([key]) => !PUBLISH_FIELDS.has(key)))
}

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined

/**
 * Checks a `traceparent` a host gives (contract §8 "Tracing"): the trace an event then belongs to,
 * or the 400 naming it.
 * @since 0.3.0
 */
export const traceOf = (traceparent: unknown): Effect.Effect<string | undefined, WaybillError> => {
  const issue = traceparentIssue(traceparent)
  return issue === undefined
    ? Effect.succeed(traceparent as string | undefined)
    : Effect.fail(new WaybillError({ status: 400, message: "The event is not valid", issues: [issue] }))
}

/**
 * Runs an in-process call as a Promise: its value, or it rejects with its `WaybillError`; with a 503
 * once `isClosed` says so (nothing run) or when interrupted, a 500 for a defect.
 * @since 0.3.0
 */
export const runCall = <A>(
  runtime: Runtime.Runtime<never>,
  isClosed: (() => boolean) | undefined,
  effect: Effect.Effect<A, WaybillError>
): Promise<A> =>
  isClosed?.() === true
    ? Promise.reject(new WaybillError({ status: 503, message: "Waybill is closed: close() was called" }))
    : Runtime.runPromiseExit(runtime, effect).then((exit) => {
        if (Exit.isSuccess(exit)) return exit.value
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure)) throw failure.value
        throw Cause.isInterruptedOnly(exit.cause)
          ? new WaybillError({ status: 503, message: "The call was interrupted: Waybill is closing" })
          : new WaybillError({ status: 500, message: "Internal server error" })
      })

/**
 * Builds `forWorkspace` over the ports in context: the workspace's functions, each running the
 * HTTP route's operation in that workspace. A bad workspace id throws a `WaybillError`.
 * @since 0.3.0
 */
export const make = (
  options: {
    /** Whether the ports are closed: every call then rejects (503) without touching them. */
    readonly isClosed?: (() => boolean) | undefined
    /** The path the host serves the API and console under (`"/waybill"`), for the console's `url`. */
    readonly basePath?: string | undefined
  } = {}
): Effect.Effect<(workspaceId: string) => WorkspaceApi, never, Requirements> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const availability = yield* Effect.serviceOption(Availability)
    const call = yield* operationsCaller(
      Option.match(availability, { onNone: () => () => false, onSome: (port) => port.isOutage })
    )
    const trimmed = options.basePath?.replace(/^\/+|\/+$/g, "") ?? ""
    const base = trimmed === "" ? "" : `/${trimmed}`
    return (workspaceId) => {
      const id = decodeWorkspaceId(workspaceId)
      if (Option.isNone(id)) throw badWorkspaceId(workspaceId)
      const workspace = CurrentWorkspace.of({ id: id.value, apiKeyId: "in-process" })
      const run = <A>(effect: Effect.Effect<A, WaybillError, CurrentWorkspace>): Promise<A> =>
        runCall(runtime, options.isClosed, Effect.provideService(effect, CurrentWorkspace, workspace))
      const invoke =
        (target: string) =>
        <A>(input: Parameters<Call>[1]): Promise<A> =>
          run(call(target, input) as Effect.Effect<A, WaybillError>)
      const by = (name: keyof typeof endpoints) => invoke(endpoints[name])
      const get = (name: keyof typeof endpoints) => (id: string) => by(name)({ path: { id } }) as never
      const list = (name: keyof typeof endpoints) => (query?: object) => by(name)({ query }) as never
      const post = (name: keyof typeof endpoints) => (id: string, body?: unknown) =>
        by(name)({ path: { id }, body }) as never
      return {
        workspaceId: id.value,
        consoleToken: (request) => by("consoleToken")({ body: request ?? {}, base }),
        consoleTokens: { list: list("consoleTokens.list"), revoke: get("consoleTokens.revoke") },
        events: {
          publish: (event) =>
            run(
              Effect.flatMap(traceOf(field(event, "traceparent")), (trace) =>
                call("webhooks.publish", {
                  body: bodyOfPublish(event),
                  idempotencyKey: field(event, "idempotencyKey")
                }).pipe(TraceContext.withIncoming(trace))
              ) as Effect.Effect<Published, WaybillError>
            )
        },
        drafts: {
          create: (body, options) => by("drafts.create")({ body, idempotencyKey: options?.idempotencyKey }),
          get: get("drafts.get"),
          list: list("drafts.list"),
          act: (id, body, options) => by("drafts.act")({ path: { id }, body, actor: options?.actor ?? hostActor }),
          delete: get("drafts.delete"),
          occurrences: (id, query) => by("drafts.occurrences")({ path: { id }, query })
        },
        products: {
          list: list("products.list"),
          execute: (productId, body) => by("products.execute")({ path: { productId }, body })
        },
        referenceData: {
          transportShapes: list("referenceData.transportShapes"),
          vehicleClasses: list("referenceData.vehicleClasses")
        },
        tours: { get: get("tours.get"), list: list("tours.list") },
        webhooks: {
          create: (body, options) => by("webhooks.create")({ body, idempotencyKey: options?.idempotencyKey }),
          list: list("webhooks.list"),
          get: get("webhooks.get"),
          update: post("webhooks.update"),
          delete: get("webhooks.delete"),
          disable: post("webhooks.disable"),
          enable: post("webhooks.enable"),
          rotate: post("webhooks.rotate"),
          stats: (id, query) => by("webhooks.stats")({ path: { id }, query }),
          deliveries: (id, query) => by("webhooks.deliveries")({ path: { id }, query }),
          resend: (id, deliveryId) => by("webhooks.resend")({ path: { id, deliveryId } }),
          replay: post("webhooks.replay"),
          filterFields: list("webhooks.filterFields"),
          alerts: list("webhooks.alerts")
        }
      }
    }
  })
