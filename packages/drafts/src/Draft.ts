/** The transport draft as stored and answered, its statuses, actions and action records. @since 0.1.0 */
import { RecurringSchedule } from "@waybill/recurring/Schedule"
import * as Schema from "effect/Schema"

/** Any JSON object (not an array, not null), as `transport` and `payload` are stored. @since 0.1.0 */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "JsonObject",
  message: () => "must be a JSON object"
})

/** @since 0.1.0 */
export type JsonObject = typeof JsonObject.Type

/** Where a draft came from: an inbox (`decode`), the hub composer (`hub`), composer/API (`manual`). @since 0.1.0 */
export const Origin = Schema.Literal("decode", "hub", "manual").annotations({ identifier: "DraftOrigin" })

/** @since 0.1.0 */
export type Origin = typeof Origin.Type

const RecurringStatus = Schema.Literal("active-recurring", "paused-recurring", "ended-recurring")

/** The six draft statuses. @since 0.1.0 */
export const DraftStatus = Schema.Literal(
  "draft",
  "review-order",
  "review-rfq",
  ...RecurringStatus.literals
).annotations({
  identifier: "DraftStatus"
})

/** @since 0.1.0 */
export type DraftStatus = typeof DraftStatus.Type

/** Every status, in the order of the contract. @since 0.1.0 */
export const statuses: ReadonlyArray<DraftStatus> = DraftStatus.literals

/** The statuses only the status machine reaches; none of them can be set at creation. @since 0.1.0 */
export const recurringStatuses: ReadonlyArray<DraftStatus> = RecurringStatus.literals

/**
 * A transport draft as answered: absent optional values are `null`, timestamps epoch seconds, a
 * master's schedule as validated (strategy filled in).
 * @since 0.1.0
 */
export const Draft = Schema.Struct({
  id: Schema.String,
  origin: Origin,
  status: DraftStatus,
  isValid: Schema.NullOr(Schema.Boolean),
  name: Schema.NullOr(Schema.String),
  transport: Schema.NullOr(JsonObject),
  transportShapeId: Schema.String,
  inboxId: Schema.NullOr(Schema.String),
  payload: Schema.NullOr(JsonObject),
  templateDraftId: Schema.NullOr(Schema.String),
  recurringSchedule: Schema.NullOr(RecurringSchedule),
  createdAt: Schema.Int,
  updatedAt: Schema.Int
}).annotations({ identifier: "Draft" })

/** @since 0.1.0 */
export type Draft = typeof Draft.Type

/**
 * The draft in its wire and stored form, without a schema pass: no field is transformed, so a
 * `Draft` is its own encoding (the compiler checks it).
 * @since 0.1.0
 */
export const asEncoded = (draft: Draft): typeof Draft.Encoded => draft

const jsonTexts = new WeakMap<Draft, string>()

/**
 * The draft as JSON text, computed once per draft value (drafts are immutable), so storage,
 * answer and event share it.
 * @since 0.1.0
 */
export const toJson = (draft: Draft): string => {
  let text = jsonTexts.get(draft)
  if (text === undefined) {
    text = JSON.stringify(asEncoded(draft))
    jsonTexts.set(draft, text)
  }
  return text
}

/** Whether a draft is a recurring master (created with a `recurringSchedule`). @since 0.1.0 */
export const isRecurringMaster = (draft: Draft): boolean => draft.recurringSchedule !== null

/** The action verbs of `POST /drafts/{id}/actions`. @since 0.1.0 */
export const ActionType = Schema.Literal(
  "activate-recurring",
  "pause-recurring",
  "resume-recurring",
  "end-recurring"
).annotations({ identifier: "TransportDraftActionType" })

/** @since 0.1.0 */
export type ActionType = typeof ActionType.Type

/** Every action verb. @since 0.1.0 */
export const actionTypes: ReadonlyArray<ActionType> = ActionType.literals

/** The body of `POST /drafts/{id}/actions`. A `null` reason counts as none. @since 0.1.0 */
export const ActionRequest = Schema.Struct({
  type: ActionType.annotations({
    message: () => ({
      message: 'must be "activate-recurring", "pause-recurring", "resume-recurring" or "end-recurring"',
      override: true
    })
  }),
  reason: Schema.optionalWith(Schema.String, { nullable: true })
}).annotations({ identifier: "TransportDraftActionRequest" })

/** @since 0.1.0 */
export type ActionRequest = typeof ActionRequest.Type

/**
 * Who performed an action: `api-key` (the key id) or `system` for the service's own, any other
 * non-empty type for an embedding host's users (`operator-user`).
 * @since 0.1.0
 */
export const Actor = Schema.Struct({
  type: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must be a non-empty string" }),
    Schema.annotations({ examples: ["api-key", "system", "operator-user"] })
  ),
  id: Schema.String
}).annotations({ identifier: "TransportDraftActor" })

/** @since 0.1.0 */
export type Actor = typeof Actor.Type

/** The actor of the transitions the service makes by itself (the end of a validity window). @since 0.1.0 */
export const systemActor: Actor = { type: "system", id: "system" }

/** The actor of an action taken with an API key: the HTTP layer's actor for every request. @since 0.1.0 */
export const apiKeyActor = (apiKeyId: string): Actor => ({ type: "api-key", id: apiKeyId })

/**
 * The action record: what was done, by whom, and when (`createdAt` epoch seconds,
 * `createdAtMilliseconds` milliseconds).
 * @since 0.1.0
 */
export const TransportDraftAction = Schema.Struct({
  id: Schema.String,
  draftId: Schema.String,
  payload: Schema.Struct({
    type: ActionType,
    reason: Schema.optional(Schema.String)
  }),
  actor: Actor,
  createdAt: Schema.Int,
  createdAtMilliseconds: Schema.Int
}).annotations({ identifier: "TransportDraftAction" })

/** @since 0.1.0 */
export type TransportDraftAction = typeof TransportDraftAction.Type

/** The answer of `POST /drafts/{id}/actions`: the draft after the action and the action record. @since 0.1.0 */
export const ActionResult = Schema.Struct({
  transportDraft: Draft,
  action: TransportDraftAction
}).annotations({ identifier: "TransportDraftActionResult" })

/** @since 0.1.0 */
export type ActionResult = typeof ActionResult.Type
