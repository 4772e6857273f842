/**
 * The draft service: create, read, list, delete, act on drafts and evaluate products, over its
 * ports. Every state change commits with its events in one transaction; actions on one draft are
 * serialised by `DraftRepository.getForUpdate`.
 * @since 0.1.0
 */
import * as Id from "@waybill/core/Id"
import * as Idempotency from "@waybill/core/Idempotency"
import * as Issue from "@waybill/core/Issue"
import * as JsonInput from "@waybill/core/JsonInput"
import * as Tracing from "@waybill/core/Tracing"
import { Transactor } from "@waybill/core/Transactor"
import * as ValidationError from "@waybill/core/ValidationError"
import { CurrentWorkspace, type WorkspaceId } from "@waybill/core/Workspace"
import { EventOutbox } from "@waybill/events/EventOutbox"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type CreateDraft, requestedTemplateId, validateCreate } from "./CreateDraft.js"
import { type ActionRequest, type ActionResult, Actor, Draft, DraftStatus, systemActor, toJson } from "./Draft.js"
import type { PreconditionFailed } from "./DraftError.js"
import { DraftConflict, DraftNotFound, type InvalidTransition, ProductNotFound } from "./DraftError.js"
import * as DraftEvents from "./DraftEvents.js"
import {
  type DraftPage,
  DraftRepository,
  decodeCursor,
  layerMemory as layerMemoryRepository
} from "./DraftRepository.js"
import * as ProductEvaluatorModule from "./ProductEvaluator.js"
import { type ExecuteRequest, type ExecuteResult, ProductEvaluator } from "./ProductEvaluator.js"
import * as ReferenceDataModule from "./ReferenceData.js"
import { lookup, ReferenceData, type ReferenceDataSet } from "./ReferenceData.js"
import { transition } from "./Transition.js"
import * as TransportForProducts from "./TransportForProducts.js"

/** Default and largest page size of `list`. @since 0.1.0 */
export const pageSize = { default: 20, max: 100 } as const

/** The query of `GET /drafts` as URL parameters (`?status=&limit=&cursor=`). @since 0.1.0 */
export const ListParams = Schema.Struct({
  status: Schema.optional(
    DraftStatus.annotations({
      message: () => ({ message: "must be one of the six draft statuses", override: true })
    })
  ),
  limit: Schema.optional(
    Schema.NumberFromString.annotations({ message: () => ({ message: "must be an integer", override: true }) })
  ),
  cursor: Schema.optional(Schema.String)
}).annotations({ identifier: "ListDraftsParams" })

/** @since 0.1.0 */
export type ListParams = typeof ListParams.Type

/**
 * The service. Methods other than `endBySystem` act for the caller in `CurrentWorkspace`; an
 * action is recorded with the actor its caller names (the HTTP layer: the request's API key,
 * `apiKeyActor(apiKeyId)`; an embedding host: its own user, `{ type: "operator-user", id }`).
 * @since 0.1.0
 */
export class DraftService extends Context.Tag("@waybill/drafts/DraftService")<
  DraftService,
  {
    /**
     * `POST /drafts` → 201. Takes the body as received (a `CreateDraft`, or any JSON value: every
     * structural problem and every rule violation comes back in one `ValidationError`). Emits
     * `transport-drafts-created` (+ `decode-job-result`).
     */
    readonly create: (
      request: CreateDraft | unknown
    ) => Effect.Effect<Draft, ValidationError.ValidationError, CurrentWorkspace>
    /**
     * `POST /drafts` with an `Idempotency-Key` (contract §8): `create`, once per workspace and
     * key, its answer (201 and the draft's JSON) written with the draft and its events; replays
     * and refusals as `Idempotency.run` says.
     */
    readonly createIdempotent: (
      request: CreateDraft | unknown,
      key: string
    ) => Effect.Effect<
      Idempotency.Outcome<Draft>,
      ValidationError.ValidationError | Idempotency.IdempotencyKeyReused | Idempotency.IdempotencyKeyInFlight,
      CurrentWorkspace | Idempotency.Idempotency
    >
    /** `GET /drafts/{id}`. */
    readonly get: (id: string) => Effect.Effect<Draft, DraftNotFound, CurrentWorkspace>
    /** `GET /drafts?status=&limit=&cursor=`: newest first; `limit` 1–100 (default 20). */
    readonly list: (params: ListParams) => Effect.Effect<DraftPage, ValidationError.ValidationError, CurrentWorkspace>
    /** `DELETE /drafts/{id}` → 204. Emits `transport-drafts-deleted`; a running master → `DraftConflict`. */
    readonly delete: (id: string) => Effect.Effect<void, DraftNotFound | DraftConflict, CurrentWorkspace>
    /**
     * `POST /drafts/{id}/actions` → 200, performed by `actor` (a malformed actor, a reserved key,
     * a number that is not finite or text that cannot be stored is a `ValidationError`). Emits the
     * lifecycle event and `transport-draft-action-created`; `Activation.layer` adds the first tours.
     */
    readonly act: (
      id: string,
      request: ActionRequest,
      actor: Actor
    ) => Effect.Effect<
      ActionResult,
      DraftNotFound | InvalidTransition | ValidationError.ValidationError,
      CurrentWorkspace
    >
    /** `POST /products/{productId}/execute` → 200, or 412 when the transport does not parse. */
    readonly execute: (
      productId: string,
      request: ExecuteRequest
    ) => Effect.Effect<ExecuteResult, ProductNotFound | DraftNotFound | PreconditionFailed, CurrentWorkspace>
    /**
     * Ends a master whose `endsAt` has passed, as the system (`RecurringMasterRepository.end`),
     * with the events of `end-recurring`; `Option.none()` if ended already, `InvalidTransition`
     * for any other draft or window. In its own transaction unless `joinTransaction`: then in
     * the caller's open one (the generator's run).
     */
    readonly endBySystem: (
      workspaceId: WorkspaceId,
      draftId: string,
      options?: { readonly joinTransaction?: boolean }
    ) => Effect.Effect<Option.Option<ActionResult>, DraftNotFound | InvalidTransition>
  }
>() {}

const listIssues = (params: ListParams): Array<Issue.Issue> => {
  const issues: Array<Issue.Issue> = []
  if (
    params.limit !== undefined &&
    (!Number.isInteger(params.limit) || params.limit < 1 || params.limit > pageSize.max)
  ) {
    issues.push(Issue.make("limit", `must be an integer from 1 to ${pageSize.max}`))
  }
  if (params.cursor !== undefined && Option.isNone(decodeCursor(params.cursor))) {
    issues.push(Issue.make("cursor", "is not a cursor returned by this list"))
  }
  return issues
}

// The value of a lookup, or the not-found error.
const orFail = <A, E>(lookup: Effect.Effect<Option.Option<A>>, notFound: () => E): Effect.Effect<A, E> =>
  Effect.flatMap(lookup, (found) => (Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(notFound())))

/** Builds the service from its ports. @since 0.1.0 */
export const make = Effect.gen(function* () {
  const repository = yield* DraftRepository
  const referenceData = yield* ReferenceData
  const evaluator = yield* ProductEvaluator
  const outbox = yield* EventOutbox
  const transactor = yield* Transactor

  // A new draft from a request, checked, and the events it raises; nothing written yet.
  const prepare = (workspaceId: WorkspaceId, request: unknown) =>
    Effect.gen(function* () {
      const templateDraftId = requestedTemplateId(request)
      const template = Option.isNone(templateDraftId)
        ? Option.none<Draft>()
        : yield* repository.get(workspaceId, templateDraftId.value)
      const shapes = yield* referenceData.transportShapes(workspaceId)
      const id = yield* Id.make("drf")
      const now = yield* Clock.currentTimeMillis
      const draft = yield* Either.match(
        validateCreate(request, { id, now, transportShape: lookup(shapes), template }),
        {
          onLeft: (issues) => Effect.fail(ValidationError.fromIssues(issues)),
          onRight: Effect.succeed
        }
      )
      return { draft, events: DraftEvents.created(draft) }
    })

  // Untraced, with a span only while a tracer is on: `Effect.fn` makes an `Error` for the call site
  // on every call, which costs as much as some of the draft's checks.
  const create = Effect.fnUntraced(
    function* (request: unknown) {
      const workspace = yield* CurrentWorkspace
      const { draft, events } = yield* prepare(workspace.id, request)
      // One round trip where the repository can write the events with the draft.
      yield* repository.insertPublishing !== undefined
        ? repository.insertPublishing(workspace.id, draft, events)
        : transactor.withTransaction(
            Effect.zipRight(repository.insert(workspace.id, draft), outbox.publish(workspace.id, events))
          )
      return draft
    },
    Tracing.withSpan("DraftService.create", { captureStackTrace: false })
  )

  const decodeDraft = Schema.decodeUnknownSync(Draft)
  const createOnce = Idempotency.operation({
    operation: "POST /drafts",
    create: (request, pending, store) =>
      Effect.gen(function* () {
        const workspaceId = pending.workspaceId
        const { draft, events } = yield* prepare(workspaceId, request)
        // The answer is the draft's own text, as `POST /drafts` sends it.
        return yield* Idempotency.complete(pending, { value: draft, status: 201, body: toJson(draft) }, (record) =>
          repository.insertPublishingIdempotent !== undefined
            ? repository.insertPublishingIdempotent(workspaceId, draft, events, record)
            : Idempotency.writeInTransaction(
                transactor,
                store,
                record,
                Effect.zipRight(repository.insert(workspaceId, draft), outbox.publish(workspaceId, events))
              )
        )
      }),
    replay: (record) => decodeDraft(JSON.parse(record.body))
  })
  const createIdempotent = (request: unknown, key: string) =>
    createOnce(request, key).pipe(Tracing.withSpan("DraftService.createIdempotent", { captureStackTrace: false }))

  const get = Effect.fn("DraftService.get")(function* (id: string) {
    const workspace = yield* CurrentWorkspace
    return yield* orFail(repository.get(workspace.id, id), () => DraftNotFound.of(id))
  })

  const list = Effect.fn("DraftService.list")(function* (params: ListParams) {
    const workspace = yield* CurrentWorkspace
    const issues = listIssues(params)
    if (issues.length > 0) return yield* Effect.fail(ValidationError.fromIssues(issues, "query"))
    return yield* repository.list(workspace.id, {
      status: params.status,
      limit: params.limit ?? pageSize.default,
      after: params.cursor === undefined ? undefined : Option.getOrUndefined(decodeCursor(params.cursor))
    })
  })

  const remove = Effect.fn("DraftService.delete")(function* (id: string) {
    const workspace = yield* CurrentWorkspace
    yield* transactor.withTransaction(
      Effect.gen(function* () {
        const draft = yield* orFail(repository.getForUpdate(workspace.id, id), () => DraftNotFound.of(id))
        if (draft.status === "active-recurring" || draft.status === "paused-recurring") {
          return yield* Effect.fail(
            new DraftConflict({
              draftId: id,
              message: `Draft ${id} is a running recurring master (${draft.status}); end it first with end-recurring.`
            })
          )
        }
        yield* repository.delete(workspace.id, id)
        yield* outbox.publish(workspace.id, DraftEvents.deleted(id))
      })
    )
  })

  // One action inside one transaction: lock, decide, write, publish.
  const applyAction = (
    workspaceId: WorkspaceId,
    id: string,
    request: ActionRequest,
    actor: Actor,
    joinTransaction = false
  ) =>
    Effect.gen(function* () {
      const needsReferenceData = request.type === "activate-recurring"
      // Reference data is read before the row lock so the transaction stays short.
      const shapes = needsReferenceData ? yield* referenceData.transportShapes(workspaceId) : []
      const vehicleClasses = needsReferenceData ? yield* referenceData.vehicleClasses(workspaceId) : []
      const actionId = yield* Id.make("act")
      const inTransaction = <A, E, R>(self: Effect.Effect<A, E, R>) =>
        joinTransaction ? self : transactor.withTransaction(self)
      return yield* inTransaction(
        Effect.gen(function* () {
          const draft = yield* orFail(repository.getForUpdate(workspaceId, id), () => DraftNotFound.of(id))
          const now = yield* Clock.currentTimeMillis
          const result = yield* transition(draft, request, now, {
            actionId,
            actor,
            transportShape: lookup(shapes),
            vehicleClass: lookup(vehicleClasses)
          })
          yield* repository.update(workspaceId, result.draft)
          yield* outbox.publish(workspaceId, result.events)
          return { transportDraft: result.draft, action: result.action } satisfies ActionResult
        })
      )
    })

  const act = Effect.fn("DraftService.act")(function* (id: string, request: ActionRequest, actor: Actor) {
    const workspace = yield* CurrentWorkspace
    // What HTTP refuses in any body, refused for callers that skip it: the action is stored.
    const refused = [...JsonInput.issues(request), ...JsonInput.issues(actor, { path: "actor" })]
    if (refused.length > 0) return yield* Effect.fail(ValidationError.fromIssues(refused))
    const checked = yield* Schema.decodeUnknown(Actor, { errors: "all" })(actor).pipe(
      Effect.mapError((error) => ValidationError.fromIssues(Issue.fromParseError(error, "actor")))
    )
    return yield* applyAction(workspace.id, id, request, checked)
  })

  const execute = Effect.fn("DraftService.execute")(function* (productId: string, request: ExecuteRequest) {
    const workspace = yield* CurrentWorkspace
    const product = yield* orFail(referenceData.product(workspace.id, productId), () => ProductNotFound.of(productId))
    const draft = yield* orFail(repository.get(workspace.id, request.draftId), () => DraftNotFound.of(request.draftId))
    const transport = yield* Either.match(TransportForProducts.parse(draft.transport), {
      onLeft: (issues) => Effect.fail(TransportForProducts.preconditionFailed(issues)),
      onRight: Effect.succeed
    })
    const result = yield* evaluator.evaluate({ workspaceId: workspace.id, product, draft, transport })
    return { productId, draftId: draft.id, productsMode: transport.productsMode, result } satisfies ExecuteResult
  })

  const endBySystem = (workspaceId: WorkspaceId, draftId: string, options?: { readonly joinTransaction?: boolean }) =>
    applyAction(
      workspaceId,
      draftId,
      { type: "end-recurring", reason: "endsAt has passed" },
      systemActor,
      options?.joinTransaction ?? false
    ).pipe(
      Effect.map(Option.some),
      Effect.catchTags({
        ValidationError: (error) => Effect.die(error),
        InvalidTransition: (error) =>
          error.status === "ended-recurring" ? Effect.succeed(Option.none()) : Effect.fail(error)
      }),
      Effect.withSpan("DraftService.endBySystem", { captureStackTrace: false })
    )

  return DraftService.of({ create, createIdempotent, get, list, delete: remove, act, execute, endBySystem })
})

/**
 * The service over its ports (provide `DraftRepository`, `ReferenceData`, `ProductEvaluator`,
 * `EventOutbox` and `Transactor`).
 * @since 0.1.0
 */
export const layer: Layer.Layer<
  DraftService,
  never,
  DraftRepository | ReferenceData | ProductEvaluator | EventOutbox | Transactor
> = Layer.effect(DraftService, make)

/**
 * The service with the in-memory drafts ports and the reference product evaluator, for tests
 * and embedders without storage; the outbox and the transactor come from outside, so they can
 * be shared with the rest of the application.
 * @since 0.1.0
 */
export const layerMemory = (
  data: ReferenceDataSet
): Layer.Layer<DraftService | DraftRepository | ReferenceData | ProductEvaluator, never, EventOutbox | Transactor> =>
  layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        layerMemoryRepository,
        ReferenceDataModule.layerMemory(data),
        ProductEvaluatorModule.layerReference
      )
    )
  )
