import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Idempotency from "@waybill/core/Idempotency"
import * as Issue from "@waybill/core/Issue"
import type { ValidationError } from "@waybill/core/ValidationError"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import { apiKeyActor, toJson } from "@waybill/drafts/Draft"
import type {
  DraftConflict,
  DraftNotFound,
  PreconditionFailed as DraftPreconditionFailed,
  InvalidTransition,
  ProductNotFound
} from "@waybill/drafts/DraftError"
import { DraftService } from "@waybill/drafts/DraftService"
import { toRecurringMaster } from "@waybill/drafts/RecurringDraft"
import * as Occurrence from "@waybill/recurring/Occurrence"
import { VehicleClassPolicy } from "@waybill/recurring/VehicleClass"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { BadRequest, Conflict, type IdempotencyKeyReused, NotFound, PreconditionFailed } from "../ApiError.js"
import { type OccurrencesPage, occurrenceDays } from "../DraftsApi.js"
import { answered } from "./idempotencyHttp.js"
import { type Operations, serveGroup } from "./operations.js"

const notFound = (error: DraftNotFound | ProductNotFound) =>
  Effect.fail(new NotFound({ message: error.message, issues: [] }))
const badRequest = (error: ValidationError) =>
  Effect.fail(new BadRequest({ message: error.message, issues: error.issues }))
const invalidTransition = (error: InvalidTransition) =>
  Effect.fail(new Conflict({ code: "invalid_transition", message: error.message, issues: [] }))
const conflict = (error: DraftConflict) =>
  Effect.fail(new Conflict({ code: "conflict", message: error.message, issues: [] }))
const preconditionFailed = (error: DraftPreconditionFailed) =>
  Effect.fail(new PreconditionFailed({ message: error.message, issues: error.issues }))

const occurrences = (drafts: DraftService["Type"], policy: VehicleClassPolicy["Type"], id: string, days: number) =>
  Effect.gen(function* () {
    const workspace = yield* CurrentWorkspace
    const draft = yield* drafts.get(id)
    const master = toRecurringMaster(workspace.id, draft)
    if (Option.isNone(master)) {
      const reason =
        draft.recurringSchedule === null
          ? "is not a recurring master (it has no recurringSchedule)"
          : "is a recurring master whose transport lacks the stops or vehicle class generation needs"
      return yield* Effect.fail(
        new BadRequest({ message: `Draft ${id} ${reason}.`, issues: [Issue.make("id", reason)] })
      )
    }
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const run = yield* Occurrence.dryRun(master.value, now, days).pipe(
      Effect.provideService(VehicleClassPolicy, policy)
    )
    const page: typeof OccurrencesPage.Type = run.truncated ? { data: run.data, truncated: true } : { data: run.data }
    // Not encoded: that would walk up to 10,000 previews only to give them back unchanged.
    return HttpServerResponse.unsafeJson(asEncoded(page))
  })

// Compiles only while the page is its own JSON (no field of a preview is transformed).
const asEncoded = (page: typeof OccurrencesPage.Type): typeof OccurrencesPage.Encoded => page

/**
 * `POST /drafts`: 201 with the draft's own text (`toJson`, written once for storage, answer and
 * event), or 400 with every issue; with an `Idempotency-Key`, the kept answer.
 */
export const createDraft =
  (drafts: DraftService["Type"], idempotency: Idempotency.Idempotency["Type"]) =>
  (
    payload: unknown,
    key: string | undefined
  ): Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    BadRequest | IdempotencyKeyReused | Conflict,
    CurrentWorkspace
  > =>
    key === undefined
      ? drafts.create(payload).pipe(
          Effect.map((draft) =>
            HttpServerResponse.text(toJson(draft), { status: 201, contentType: "application/json" })
          ),
          Effect.catchTag("ValidationError", badRequest)
        )
      : drafts.createIdempotent(payload, key).pipe(answered(idempotency))

/** The drafts group's operations. */
export const draftsOperations = Effect.gen(function* () {
  const drafts = yield* DraftService
  const policy = yield* VehicleClassPolicy
  const create = createDraft(drafts, yield* Idempotency.Idempotency)
  return {
    create: ({ payload, idempotencyKey }) => create(payload, idempotencyKey),
    list: ({ urlParams }) => drafts.list(urlParams).pipe(Effect.catchTag("ValidationError", badRequest)),
    get: ({ path }) => drafts.get(path.id).pipe(Effect.catchTag("DraftNotFound", notFound)),
    delete: ({ path }) =>
      drafts.delete(path.id).pipe(Effect.catchTags({ DraftNotFound: notFound, DraftConflict: conflict })),
    act: ({ path, payload, actor }) =>
      Effect.flatMap(CurrentWorkspace, (workspace) =>
        drafts.act(path.id, payload, actor ?? apiKeyActor(workspace.apiKeyId))
      ).pipe(
        Effect.catchTags({
          DraftNotFound: notFound,
          InvalidTransition: invalidTransition,
          ValidationError: badRequest
        })
      ),
    occurrences: ({ path, urlParams }) =>
      occurrences(drafts, policy, path.id, urlParams.days ?? occurrenceDays.default).pipe(
        Effect.catchTag("DraftNotFound", notFound)
      )
  } satisfies Operations<"drafts">
})

/** The products group's operation. */
export const productsOperations = Effect.map(
  DraftService,
  (drafts) =>
    ({
      execute: ({ path, payload }) =>
        drafts.execute(path.productId, payload).pipe(
          Effect.catchTags({
            DraftNotFound: notFound,
            ProductNotFound: notFound,
            PreconditionFailed: preconditionFailed
          })
        )
    }) satisfies Operations<"products">
)

export const DraftsLive = serveGroup("drafts", draftsOperations)

export const ProductsLive = serveGroup("products", productsOperations)
