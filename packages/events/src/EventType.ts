/** The 60 event types of the catalogue, spelled and ordered exactly as the spec's table. @since 0.1.0 */
import * as Schema from "effect/Schema"

/** Every event type, in the spec's order. @since 0.1.0 */
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

/** An event type name. @since 0.1.0 */
export const EventType = Schema.Literal(...all).annotations({
  identifier: "EventType",
  description: "A catalogue event type.",
  message: (issue) => ({ message: notInCatalogue(issue.actual), override: true })
})

/** @since 0.1.0 */
export type EventType = typeof EventType.Type

const known: ReadonlySet<string> = new Set(all)

/** Whether a string names a catalogue event type. @since 0.1.0 */
export const isEventType = (value: unknown): value is EventType => typeof value === "string" && known.has(value)

// Edit distance with transpositions (optimal string alignment), given up beyond `limit`.
const distance = (a: string, b: string, limit: number): number => {
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  let before = Array.from({ length: b.length + 1 }, (_, j) => j)
  let previous = before
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1)
      row.push(value)
      best = Math.min(best, value)
    }
    if (best > limit) return limit + 1
    before = previous
    previous = row
  }
  return previous[b.length]!
}

/**
 * Up to three catalogue names closest to an unknown one (case, `_` and spaces ignored): the
 * fewest letters off, else the names it begins. Empty when nothing is close.
 * @since 0.1.0
 */
export const closestTypes = (value: string): ReadonlyArray<EventType> => {
  const wanted = value
    .trim()
    .toLowerCase()
    .replace(/[_\s]+/g, "-")
  if (wanted === "" || wanted.length > 100) return []
  const limit = Math.max(2, Math.floor(wanted.length / 4))
  const scored = all.map((type) => ({ type, distance: distance(wanted, type, limit) }))
  const best = Math.min(...scored.map((candidate) => candidate.distance))
  if (best <= limit) {
    return scored
      .filter((candidate) => candidate.distance === best)
      .map((candidate) => candidate.type)
      .slice(0, 3)
  }
  return wanted.length < 4 ? [] : all.filter((type) => type.startsWith(`${wanted}-`)).slice(0, 3)
}

/**
 * The issue message for a value that is not a catalogue event type, with the closest names
 * (`…; did you mean transport-drafts-created?`); the value itself is not quoted back.
 * @since 0.1.0
 */
export const notInCatalogue = (value: unknown): string => {
  const closest = typeof value === "string" ? closestTypes(value) : []
  if (closest.length === 0) return "is not a catalogue event type"
  const names = closest.length === 1 ? closest[0] : `${closest.slice(0, -1).join(", ")} or ${closest.at(-1)}`
  return `is not a catalogue event type; did you mean ${names}?`
}
