/**
 * The payload schema of every event type (spec "Event types and payloads"): exactly the spec's
 * keys and their optionality; the entities inside are open (see `Entity`).
 *
 * @since 0.1.0
 */
import type { Issue } from "@waybill/core/Issue"
import * as JsonDepth from "@waybill/core/JsonDepth"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"
import * as Entity from "./Entity.js"
import * as EntityAction from "./EntityAction.js"
import { maxPayloadDepth } from "./EventOutbox.js"
import type { EventType } from "./EventType.js"
import { GuardedId, NoPresenceId, NotFilterableId } from "./internal/annotations.js"
import { fromParseError } from "./internal/issues.js"
import { pascal } from "./internal/names.js"
import { together } from "./internal/schemas.js"
import * as Task from "./Task.js"

const payload = <Fields extends Schema.Struct.Fields>(description: string, fields: Fields) =>
  Schema.Struct(fields).annotations({ description })

const tourPayload = (description: string) => payload(description, { tour: Entity.Tour })

// Names each payload schema after its event type (`TourCreatedPayload`, …).
const identified = <T extends { readonly [K in EventType]: Schema.Schema.AnyNoContext }>(table: T): T =>
  Object.fromEntries(
    Object.entries(table).map(([type, schema]) => [type, schema.annotations({ identifier: `${pascal(type)}Payload` })])
  ) as T

const reference = { referencedEntity: Task.ReferencedEntity }

const statusSnapshotKey = Schema.optionalWith(Schema.String, { exact: true })

/**
 * Payload schemas by event type.
 *
 * @since 0.1.0
 * @category schemas
 */
export const schemas = identified({
  "tour-created": tourPayload("A tour was created (each tour a recurring master generates, too)."),
  "tour-assigned": tourPayload("A carrier was assigned to a tour."),
  "tour-unassigned-carrier": tourPayload("The carrier was unassigned from a tour."),
  "tour-started": tourPayload("A tour started."),
  "tour-arrived-at-stop": tourPayload("A tour arrived at a stop."),
  "tour-departed-from-stop": tourPayload("A tour departed from a stop."),
  "tour-proof-attached": tourPayload("A proof was attached to a tour."),
  "tour-waiting-for-review": tourPayload(
    "A tour waits for review; fired by the last advance, a carrier-reported delivery, or manual-complete."
  ),
  "tour-completed": tourPayload("A tour was completed."),
  "tour-cancelled": tourPayload("A tour was cancelled."),
  "tour-deleted": payload("A tour was deleted; only its id is delivered.", { tourId: Schema.String }),
  "tour-edited": tourPayload("A tour was edited."),
  "tour-rebuilt": payload("A tour was rebuilt.", { tour: Entity.Tour, action: EntityAction.TourAction }),
  "tour-action-created": Schema.Struct({
    tour: Entity.Tour,
    action: EntityAction.TourAction,
    oldStatus: statusSnapshotKey.annotations({
      description: "Status before the commit; present only when the commit relayed its status snapshot."
    }),
    newStatus: statusSnapshotKey.annotations({
      description: "Status after the commit; present only when the commit relayed its status snapshot."
    })
  })
    .pipe(together("oldStatus", "newStatus", "oldStatus and newStatus come together (the commit's status snapshot)"))
    .annotations({
      description:
        "Any action on a tour (status advances, reverse, reset, manual-complete, assignments, edits, rebuilds, " +
        "proof attachments and more), including backward transitions no lifecycle event covers. The verb is " +
        "action.payload.type. oldStatus/newStatus are present only on the first action of a commit that relayed " +
        "its status snapshot; equal values mean the top-level status did not change. Carrier-integration " +
        "internals are redacted."
    }),
  "shipments-created": payload("Shipments were created (a list; no per-item filter fields).", {
    shipments: Schema.Array(Entity.Shipment)
  }),
  "shipment-deleted": payload("A shipment was deleted; only its id is delivered.", { shipmentId: Schema.String }),
  "shipment-updated": payload("A shipment was updated.", { shipment: Entity.Shipment }),
  "order-created": payload(
    "An order was created, with its tour and document links when there are any. Filter fields of the optional " +
      "tour offer no is_set / is_not_set.",
    {
      order: Entity.Order,
      tour: Schema.optionalWith(Entity.Tour, { exact: true }).annotations({ [NoPresenceId]: true }),
      documentLinks: Schema.optionalWith(Schema.Array(Entity.DocumentLink), { exact: true })
    }
  ),
  "order-updated": payload("An order was updated.", { order: Entity.Order }),
  "operator-user-invite-created": payload("An operator user was invited.", {
    operatorUserInvite: Entity.OperatorUserInvite
  }),
  "operator-user-created": payload("An operator user was created.", { operatorUser: Entity.OperatorUser }),
  "shipper-created": payload("A shipper was created.", { shipper: Entity.Shipper }),
  "shipper-updated": payload("A shipper was updated.", { shipper: Entity.Shipper, action: EntityAction.ShipperAction }),
  "shipper-team-created": payload("A shipper team was created.", { shipperTeam: Entity.ShipperTeam }),
  "shipper-team-updated": payload("A shipper team was updated.", {
    shipperTeam: Entity.ShipperTeam,
    action: EntityAction.ShipperTeamAction
  }),
  "shipper-user-created": payload("A shipper user was created.", { shipperUser: Entity.ShipperUser }),
  "shipper-user-updated": payload("A shipper user was updated.", {
    shipperUser: Entity.ShipperUser,
    action: EntityAction.ShipperUserAction
  }),
  "shipper-address-created": payload("A shipper address was created.", { shipperAddress: Entity.ShipperAddress }),
  "mailbox-created": payload("A mailbox was created.", { mailbox: Entity.Mailbox }),
  "mailbox-mail-received": payload("A mailbox received a mail; only its id is delivered.", {
    mailboxId: Schema.String
  }),
  "mailbox-status-changed": payload("A mailbox became active or inactive.", {
    mailboxId: Schema.String,
    newStatus: Entity.MailboxStatus,
    oldStatus: Entity.MailboxStatus
  }),
  "decode-job-result": payload("A decode job produced a draft (origin decode).", {
    transportDraft: Entity.TransportDraft
  }),
  "callout-action-created": payload(
    "An action on callouts. callouts holds only the callouts the action modified, each enriched with bidding " +
      "stats (only suggestedBid for secret auctions); filtering on callouts is not possible. action.payload " +
      "mirrors the driving request without internal dispatch context. tour carries only id and properties and is " +
      "absent when the action was not raised against a tour (system cancellations); a condition on a tour field " +
      "then does not match. action.createdAt and action.createdAtMilliseconds are both epoch milliseconds.",
    {
      callouts: Schema.Array(Entity.CalloutWithStats).annotations({ [NotFilterableId]: true }),
      action: EntityAction.CalloutAction,
      tour: Schema.optionalWith(Entity.CalloutTour, { exact: true }).annotations({ [GuardedId]: true })
    }
  ),
  "sequence-invocation-created": payload("A sequence was invoked.", { sequenceInvocation: Entity.SequenceInvocation }),
  "sequence-invocation-action-created": payload("An action on a sequence invocation.", {
    sequenceInvocationAction: EntityAction.SequenceInvocationAction
  }),
  "transport-drafts-created": payload("Transport drafts were created (a list; no per-item filter fields).", {
    transportDrafts: Schema.Array(Entity.TransportDraft)
  }),
  "transport-drafts-deleted": payload(
    "Transport drafts were deleted; only their ids are delivered (a list; no per-item filter fields).",
    { transportDraftIds: Schema.Array(Schema.String) }
  ),
  "transport-draft-action-created": payload("An action on a transport draft.", {
    transportDraft: Entity.TransportDraft,
    action: EntityAction.TransportDraftAction
  }),
  "carrier-action-created": payload("An action on a carrier.", {
    carrier: Entity.Carrier,
    action: EntityAction.CarrierAction
  }),
  "carrier-team-created": payload("A carrier team was created.", { carrierTeam: Entity.CarrierTeam }),
  "carrier-team-action-created": payload("An action on a carrier team.", {
    carrierTeam: Entity.CarrierTeam,
    action: EntityAction.CarrierTeamAction
  }),
  "carrier-user-created": payload("A carrier user was created.", { carrierUser: Entity.CarrierUser }),
  "carrier-user-action-created": payload("An action on a carrier user.", {
    carrierUser: Entity.CarrierUser,
    action: EntityAction.CarrierUserAction
  }),
  "document-link-action-created": payload(
    "An action on a document link. A task's PDF receipt arrives this way, with documentLink.targetEntityType task.",
    { documentLink: Entity.DocumentLink, action: EntityAction.DocumentLinkAction }
  ),
  "leg-created": payload("A leg was created.", { leg: Entity.Leg }),
  "leg-action-created": payload(
    "Every leg lifecycle transition (pickup and dropoff progress, delivery, failure, cancellation, tour " +
      "assignment); there are no per-status leg events. The verb is action.payload.type; leg is the full leg " +
      "after the transition.",
    { leg: Entity.Leg, action: EntityAction.LegAction }
  ),
  "leg-deleted": payload("A leg was deleted; the full removed leg is delivered.", { leg: Entity.Leg }),
  "transport-draft-recurring-activated": payload("A recurring master was activated; tour generation starts.", {
    transportDraft: Entity.TransportDraft
  }),
  "transport-draft-recurring-paused": payload("A recurring master was paused; generation stops.", {
    transportDraft: Entity.TransportDraft
  }),
  "transport-draft-recurring-resumed": payload("A recurring master was resumed; generation continues from now on.", {
    transportDraft: Entity.TransportDraft
  }),
  "transport-draft-recurring-ended": payload(
    "A recurring master ended (by request, or by itself once endsAt has passed).",
    { transportDraft: Entity.TransportDraft }
  ),
  "comment-created": payload("A comment was created.", { comment: Entity.Comment }),
  "comment-edited": payload("A comment was edited.", { comment: Entity.Comment }),
  "comment-deleted": payload("A comment was deleted; the comment is delivered.", { comment: Entity.Comment }),
  "comment-reaction-added": payload("A reaction was added to a comment.", {
    comment: Entity.Comment,
    reaction: Entity.CommentReaction
  }),
  "comment-reaction-removed": payload("A reaction was removed from a comment.", {
    comment: Entity.Comment,
    reaction: Entity.CommentReaction
  }),
  "task-created": payload("A task came to exist.", { task: Task.Task, ...reference }),
  "task-completed": payload(
    "A task was completed (one of the three closing events, exactly one per task). task.outcome.formOutput " +
      "holds the complete validated form output keyed by form element id; a PDF receipt, when the template " +
      "names a document template, follows separately as document-link-action-created.",
    { task: Task.CompletedTask, ...reference }
  ),
  "task-skipped": payload("A task was skipped (one of the three closing events).", { task: Task.Task, ...reference }),
  "task-cancelled": payload("A task was cancelled (one of the three closing events).", {
    task: Task.Task,
    ...reference
  })
})

/**
 * The payload of an event type.
 *
 * @since 0.1.0
 * @category models
 */
export type PayloadOf<T extends EventType> = Schema.Schema.Type<(typeof schemas)[T]>

/**
 * The payload schema of an event type.
 *
 * @since 0.1.0
 * @category schemas
 */
export const payloadSchema = <T extends EventType>(type: T): Schema.Schema<PayloadOf<T>, PayloadOf<T>> =>
  schemas[type] as unknown as Schema.Schema<PayloadOf<T>, PayloadOf<T>>

/**
 * Parse options of every payload decode: report every issue; unknown top-level payload keys are
 * errors (entities stay open through their index signatures).
 *
 * @since 0.1.0
 * @category decoding
 */
export const parseOptions: AST.ParseOptions = { errors: "all", onExcessProperty: "error" }

const decoders = new Map<EventType, (input: unknown) => Either.Either<unknown, ParseResult.ParseError>>()

const decoderFor = (type: EventType) => {
  let decoder = decoders.get(type)
  if (decoder === undefined) {
    const decode = Schema.decodeUnknownEither(schemas[type] as Schema.Schema<unknown, unknown>)
    decoder = (input) => decode(input, parseOptions)
    decoders.set(type, decoder)
  }
  return decoder
}

/**
 * Validates a payload against its event type's schema: the payload, or every issue found with
 * a dotted path relative to the payload (the HTTP layer prefixes `payload.`).
 *
 * The payload schemas only check (they transform nothing), so a valid input is returned as it
 * is: a `__proto__` key from `JSON.parse` stays an own data property instead of becoming a
 * prototype, as it would in a rebuilt object.
 *
 * A payload nested deeper than `EventOutbox.maxPayloadDepth` levels gets one issue at the path
 * where that limit is crossed and is not decoded: the decoder's messages quote the values they
 * refuse, and quoting recurses.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodePayload = <T extends EventType>(
  type: T,
  input: unknown
): Either.Either<PayloadOf<T>, ReadonlyArray<Issue>> => {
  const tooDeep = JsonDepth.depthIssue(input, maxPayloadDepth)
  if (Option.isSome(tooDeep)) return Either.left([tooDeep.value])
  return Either.match(decoderFor(type)(input), {
    onLeft: (error) => Either.left(fromParseError(error)),
    onRight: () => Either.right(input as PayloadOf<T>)
  })
}
