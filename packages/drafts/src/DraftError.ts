/**
 * The typed failures of the draft service, each with the HTTP answer it maps to; validation
 * fails with `@waybill/core`'s `ValidationError` (400).
 * @since 0.1.0
 */
import { Issue } from "@waybill/core/Issue"
import * as Schema from "effect/Schema"
import { ActionType, DraftStatus } from "./Draft.js"

/** No draft with this id in the caller's workspace (404 `not_found`, also for another workspace's). @since 0.1.0 */
export class DraftNotFound extends Schema.TaggedError<DraftNotFound>("@waybill/drafts/DraftNotFound")("DraftNotFound", {
  draftId: Schema.String,
  message: Schema.String
}) {
  /** @since 0.1.0 */
  static of(draftId: string): DraftNotFound {
    return new DraftNotFound({ draftId, message: `No draft with id ${JSON.stringify(draftId)} exists.` })
  }
}

/** No product with this id (404 `not_found`). @since 0.1.0 */
export class ProductNotFound extends Schema.TaggedError<ProductNotFound>("@waybill/drafts/ProductNotFound")(
  "ProductNotFound",
  { productId: Schema.String, message: Schema.String }
) {
  /** @since 0.1.0 */
  static of(productId: string): ProductNotFound {
    return new ProductNotFound({ productId, message: `No product with id ${JSON.stringify(productId)} exists.` })
  }
}

/** The action is not allowed in the draft's status or on a non-master (409 `invalid_transition`). @since 0.1.0 */
export class InvalidTransition extends Schema.TaggedError<InvalidTransition>("@waybill/drafts/InvalidTransition")(
  "InvalidTransition",
  { draftId: Schema.String, status: DraftStatus, action: ActionType, message: Schema.String }
) {}

/** The request conflicts with the draft's state, e.g. deleting a running master (409 `conflict`). @since 0.1.0 */
export class DraftConflict extends Schema.TaggedError<DraftConflict>("@waybill/drafts/DraftConflict")("DraftConflict", {
  draftId: Schema.String,
  message: Schema.String
}) {}

/**
 * The draft's transport does not parse against TransportForProducts (412 `precondition_failed`);
 * `issues` repeats the `message`'s problems with paths from the request root.
 * @since 0.1.0
 */
export class PreconditionFailed extends Schema.TaggedError<PreconditionFailed>("@waybill/drafts/PreconditionFailed")(
  "PreconditionFailed",
  { message: Schema.String, issues: Schema.Array(Issue) }
) {}
