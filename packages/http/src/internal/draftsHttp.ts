import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type { ValidationError } from "@waybill/core/ValidationError"
import type {
  DraftConflict,
  DraftNotFound,
  PreconditionFailed as DraftPreconditionFailed,
  InvalidTransition,
  ProductNotFound
} from "@waybill/drafts/DraftError"
import { DraftService } from "@waybill/drafts/DraftService"
import * as Effect from "effect/Effect"
import { WaybillApi } from "../Api.js"
import { BadRequest, Conflict, NotFound, PreconditionFailed } from "../ApiError.js"

// Domain errors → the contract's error bodies.
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

export const DraftsLive = HttpApiBuilder.group(WaybillApi, "drafts", (handlers) =>
  Effect.gen(function* () {
    const drafts = yield* DraftService
    return handlers
      .handle("create", ({ payload }) => drafts.create(payload).pipe(Effect.catchTag("ValidationError", badRequest)))
      .handle("list", ({ urlParams }) => drafts.list(urlParams).pipe(Effect.catchTag("ValidationError", badRequest)))
      .handle("get", ({ path }) => drafts.get(path.id).pipe(Effect.catchTag("DraftNotFound", notFound)))
      .handle("delete", ({ path }) =>
        drafts.delete(path.id).pipe(Effect.catchTags({ DraftNotFound: notFound, DraftConflict: conflict }))
      )
      .handle("act", ({ path, payload }) =>
        drafts.act(path.id, payload).pipe(
          Effect.catchTags({
            DraftNotFound: notFound,
            InvalidTransition: invalidTransition,
            ValidationError: badRequest
          })
        )
      )
  })
)

export const ProductsLive = HttpApiBuilder.group(WaybillApi, "products", (handlers) =>
  Effect.gen(function* () {
    const drafts = yield* DraftService
    return handlers.handle("execute", ({ path, payload }) =>
      drafts.execute(path.productId, payload).pipe(
        Effect.catchTags({
          DraftNotFound: notFound,
          ProductNotFound: notFound,
          PreconditionFailed: preconditionFailed
        })
      )
    )
  })
)
