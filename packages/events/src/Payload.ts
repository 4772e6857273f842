/**
 * The payload schema of every event type: exactly the spec's keys and optionality; the entities
 * inside are open (see `Entity`).
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

// The entities whose schema `Entity` exports under their name in PascalCase (`shipperTeam`:
// `Entity.ShipperTeam`), and those whose action `EntityAction` exports as `ShipperTeamAction`.
type Entities = typeof Entity
type Actions = typeof EntityAction
type Named = { [N in Entity.EntityName]: Capitalize<N> extends keyof Entities ? N : never }[Entity.EntityName]
type Acted = { [N in Named]: `${Capitalize<N>}Action` extends keyof Actions ? N : never }[Named]
type EntityOf<N extends Named> = Entities[Capitalize<N> & keyof Entities]
type ActionOf<N extends Acted> = Actions[`${Capitalize<N>}Action` & keyof Actions]

const entityOf = <N extends Named>(name: N) =>
  // biome-ignore lint/performance/noDynamicNamespaceImportAccess: the catalogue names nearly every entity; the name is the one source of its key and schema
  Entity[pascal(name) as keyof Entities] as EntityOf<N>

const about = <N extends Named>(name: N, description: string) =>
  payload(description, { [name]: entityOf(name) } as { readonly [K in N]: EntityOf<N> })

const actionOn = <N extends Acted>(name: N, description: string) =>
  payload(description, {
    [name]: entityOf(name),
    // biome-ignore lint/performance/noDynamicNamespaceImportAccess: as in entityOf, the name picks the action
    action: EntityAction[`${pascal(name)}Action` as keyof Actions] as ActionOf<N>
  } as { readonly [K in N]: EntityOf<N> } & { readonly action: ActionOf<N> })

const identified = <T extends { readonly [K in EventType]: Schema.Schema.AnyNoContext }>(table: T): T =>
  Object.fromEntries(
    Object.entries(table).map(([type, schema]) => [type, schema.annotations({ identifier: `${pascal(type)}Payload` })])
  ) as T

const reference = { referencedEntity: Task.ReferencedEntity }

const statusSnapshotKey = Schema.optionalWith(Schema.String, { exact: true })

/** Payload schemas by event type. @since 0.1.0 */
export const schemas = identified({
  "tour-created": about("tour", "A tour was created (each tour a recurring master generates, too)."),
  "tour-assigned": about("tour", "A carrier was assigned to a tour."),
  "tour-unassigned-carrier": about("tour", "The carrier was unassigned from a tour."),
  "tour-started": about("tour", "A tour started."),
  "tour-arrived-at-stop": about("tour", "A tour arrived at a stop."),
  "tour-departed-from-stop": about("tour", "A tour departed from a stop."),
  "tour-proof-attached": about("tour", "A proof was attached to a tour."),
  "tour-waiting-for-review": about(
    "tour",
    "A tour waits for review; fired by the last advance, a carrier-reported delivery, or manual-complete."
  ),
  "tour-completed": about("tour", "A tour was completed."),
  "tour-cancelled": about("tour", "A tour was cancelled."),
  "tour-deleted": payload("A tour was deleted; only its id is delivered.", { tourId: Schema.String }),
  "tour-edited": about("tour", "A tour was edited."),
  "tour-rebuilt": actionOn("tour", "A tour was rebuilt."),
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
  "shipment-updated": about("shipment", "A shipment was updated."),
  "order-created": payload(
    "An order was created, with its tour and document links when there are any. Filter fields of the optional " +
      "tour offer no is_set / is_not_set.",
    {
      order: Entity.Order,
      tour: Schema.optionalWith(Entity.Tour, { exact: true }).annotations({ [NoPresenceId]: true }),
      documentLinks: Schema.optionalWith(Schema.Array(Entity.DocumentLink), { exact: true })
    }
  ),
  "order-updated": about("order", "An order was updated."),
  "operator-user-invite-created": about("operatorUserInvite", "An operator user was invited."),
  "operator-user-created": about("operatorUser", "An operator user was created."),
  "shipper-created": about("shipper", "A shipper was created."),
  "shipper-updated": actionOn("shipper", "A shipper was updated."),
  "shipper-team-created": about("shipperTeam", "A shipper team was created."),
  "shipper-team-updated": actionOn("shipperTeam", "A shipper team was updated."),
  "shipper-user-created": about("shipperUser", "A shipper user was created."),
  "shipper-user-updated": actionOn("shipperUser", "A shipper user was updated."),
  "shipper-address-created": about("shipperAddress", "A shipper address was created."),
  "mailbox-created": about("mailbox", "A mailbox was created."),
  "mailbox-mail-received": payload("A mailbox received a mail; only its id is delivered.", {
    mailboxId: Schema.String
  }),
  "mailbox-status-changed": payload("A mailbox became active or inactive.", {
    mailboxId: Schema.String,
    newStatus: Entity.MailboxStatus,
    oldStatus: Entity.MailboxStatus
  }),
  "decode-job-result": about("transportDraft", "A decode job produced a draft (origin decode)."),
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
  "sequence-invocation-created": about("sequenceInvocation", "A sequence was invoked."),
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
  "transport-draft-action-created": actionOn("transportDraft", "An action on a transport draft."),
  "carrier-action-created": actionOn("carrier", "An action on a carrier."),
  "carrier-team-created": about("carrierTeam", "A carrier team was created."),
  "carrier-team-action-created": actionOn("carrierTeam", "An action on a carrier team."),
  "carrier-user-created": about("carrierUser", "A carrier user was created."),
  "carrier-user-action-created": actionOn("carrierUser", "An action on a carrier user."),
  "document-link-action-created": actionOn(
    "documentLink",
    "An action on a document link. A task's PDF receipt arrives this way, with documentLink.targetEntityType task."
  ),
  "leg-created": about("leg", "A leg was created."),
  "leg-action-created": actionOn(
    "leg",
    "Every leg lifecycle transition (pickup and dropoff progress, delivery, failure, cancellation, tour " +
      "assignment); there are no per-status leg events. The verb is action.payload.type; leg is the full leg " +
      "after the transition."
  ),
  "leg-deleted": about("leg", "A leg was deleted; the full removed leg is delivered."),
  "transport-draft-recurring-activated": about(
    "transportDraft",
    "A recurring master was activated; tour generation starts."
  ),
  "transport-draft-recurring-paused": about("transportDraft", "A recurring master was paused; generation stops."),
  "transport-draft-recurring-resumed": about(
    "transportDraft",
    "A recurring master was resumed; generation continues from now on."
  ),
  "transport-draft-recurring-ended": about(
    "transportDraft",
    "A recurring master ended (by request, or by itself once endsAt has passed)."
  ),
  "comment-created": about("comment", "A comment was created."),
  "comment-edited": about("comment", "A comment was edited."),
  "comment-deleted": about("comment", "A comment was deleted; the comment is delivered."),
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

/** The payload of an event type. @since 0.1.0 */
export type PayloadOf<T extends EventType> = Schema.Schema.Type<(typeof schemas)[T]>

/** The payload schema of an event type. @since 0.1.0 */
export const payloadSchema = <T extends EventType>(type: T): Schema.Schema<PayloadOf<T>, PayloadOf<T>> =>
  schemas[type] as unknown as Schema.Schema<PayloadOf<T>, PayloadOf<T>>

/**
 * Parse options of every payload decode: report every issue; unknown top-level payload keys are
 * errors (entities stay open through their index signatures).
 * @since 0.1.0
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
 * Validates a payload against its event type's schema: the input itself (never rebuilt, so a
 * `__proto__` key stays a data property), or every issue with a dotted path relative to it.
 * A payload deeper than `EventOutbox.maxPayloadDepth` gets one issue where the limit is crossed
 * and is not decoded (the decoder's messages quote values, recursively).
 * @since 0.1.0
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
