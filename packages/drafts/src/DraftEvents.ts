/**
 * The events drafts raise, ready for `EventOutbox.publish`, each keyed by its draft's id (contract
 * §8, Ordering by key). @since 0.1.0
 */
import type { NewEvent } from "@waybill/events/EventOutbox"
import { type ActionType, type Draft, type TransportDraftAction, toJson } from "./Draft.js"

/** The event types a draft change can raise. @since 0.1.0 */
export const EventType = {
  created: "transport-drafts-created",
  deleted: "transport-drafts-deleted",
  actionCreated: "transport-draft-action-created",
  decodeJobResult: "decode-job-result",
  recurringActivated: "transport-draft-recurring-activated",
  recurringPaused: "transport-draft-recurring-paused",
  recurringResumed: "transport-draft-recurring-resumed",
  recurringEnded: "transport-draft-recurring-ended"
} as const

/** @since 0.1.0 */
export type EventType = (typeof EventType)[keyof typeof EventType]

/** The lifecycle event each action raises beside `transport-draft-action-created`. @since 0.1.0 */
export const lifecycleEventOf: Readonly<Record<ActionType, EventType>> = {
  "activate-recurring": EventType.recurringActivated,
  "pause-recurring": EventType.recurringPaused,
  "resume-recurring": EventType.recurringResumed,
  "end-recurring": EventType.recurringEnded
}

/** What `POST /drafts` raises: `transport-drafts-created`, plus `decode-job-result` if decoded. @since 0.1.0 */
export const created = (draft: Draft): ReadonlyArray<NewEvent> => {
  // The draft's text is written once (`toJson`); the bodies are built around it.
  const created: NewEvent = {
    type: EventType.created,
    payload: { transportDrafts: [draft] },
    payloadJson: `{"transportDrafts":[${toJson(draft)}]}`,
    orderingKey: draft.id
  }
  return draft.origin === "decode"
    ? [
        created,
        {
          type: EventType.decodeJobResult,
          payload: { transportDraft: draft },
          payloadJson: `{"transportDraft":${toJson(draft)}}`,
          orderingKey: draft.id
        }
      ]
    : [created]
}

/** What `DELETE /drafts/{id}` raises. @since 0.1.0 */
export const deleted = (draftId: string): ReadonlyArray<NewEvent> => [
  { type: EventType.deleted, payload: { transportDraftIds: [draftId] }, orderingKey: draftId }
]

/** What an action raises: its lifecycle event, then `transport-draft-action-created`. @since 0.1.0 */
export const acted = (draft: Draft, action: TransportDraftAction): ReadonlyArray<NewEvent> => [
  { type: lifecycleEventOf[action.payload.type], payload: { transportDraft: draft }, orderingKey: draft.id },
  { type: EventType.actionCreated, payload: { transportDraft: draft, action }, orderingKey: draft.id }
]
