/**
 * The 60 event types of the catalogue, spelled and ordered exactly as the spec's table.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * Every event type, in the spec's order.
 *
 * @since 0.1.0
 * @category models
 */
export const all = [
  "tour-created",
  "tour-assigned",
  "tour-unassigned-carrier",
  "tour-started",
  "tour-arrived-at-stop",
  "tour-departed-from-stop",
  "tour-proof-attached",
  "tour-waiting-for-review",
  "tour-completed",
  "tour-cancelled",
  "tour-deleted",
  "tour-edited",
  "tour-rebuilt",
  "tour-action-created",
  "shipments-created",
  "shipment-deleted",
  "shipment-updated",
  "order-created",
  "order-updated",
  "operator-user-invite-created",
  "operator-user-created",
  "shipper-created",
  "shipper-updated",
  "shipper-team-created",
  "shipper-team-updated",
  "shipper-user-created",
  "shipper-user-updated",
  "shipper-address-created",
  "mailbox-created",
  "mailbox-mail-received",
  "mailbox-status-changed",
  "decode-job-result",
  "callout-action-created",
  "sequence-invocation-created",
  "sequence-invocation-action-created",
  "transport-drafts-created",
  "transport-drafts-deleted",
  "transport-draft-action-created",
  "carrier-action-created",
  "carrier-team-created",
  "carrier-team-action-created",
  "carrier-user-created",
  "carrier-user-action-created",
  "document-link-action-created",
  "leg-created",
  "leg-action-created",
  "leg-deleted",
  "transport-draft-recurring-activated",
  "transport-draft-recurring-paused",
  "transport-draft-recurring-resumed",
  "transport-draft-recurring-ended",
  "comment-created",
  "comment-edited",
  "comment-deleted",
  "comment-reaction-added",
  "comment-reaction-removed",
  "task-created",
  "task-completed",
  "task-skipped",
  "task-cancelled"
] as const

/**
 * An event type name.
 *
 * @since 0.1.0
 * @category models
 */
export const EventType = Schema.Literal(...all).annotations({
  identifier: "EventType",
  description: "A catalogue event type.",
  message: () => ({ message: "is not a catalogue event type", override: true })
})

/**
 * @since 0.1.0
 * @category models
 */
export type EventType = typeof EventType.Type

const known: ReadonlySet<string> = new Set(all)

/**
 * Whether a string names a catalogue event type.
 *
 * @since 0.1.0
 * @category guards
 */
export const isEventType = (value: unknown): value is EventType => typeof value === "string" && known.has(value)
