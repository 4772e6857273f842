/**
 * Schemas of the entities event payloads carry: a string `id` and the fields the spec shows are
 * typed, every other field passes through (entities are open). Tasks are in `Task`, action
 * records in `EntityAction`.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { EntityId, FieldTypeId, FilterAsId } from "./internal/annotations.js"
import { oneOf, optional, together } from "./internal/schemas.js"

/** The index signature that keeps fields the spec does not show. @since 0.1.0 */
export const OpenFields = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** Any JSON object, kept as it is. @since 0.1.0 */
export const OpenObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  description: "any JSON object"
})

/**
 * Any JSON value, for a field the spec names without a type. Filters offer it as `filterAs` and
 * compare strictly, so a value of another type does not match.
 * @since 0.1.0
 */
export const AnyJson = (filterAs: Schema.Schema.Any) =>
  Schema.Unknown.annotations({
    description: "any JSON value (the spec shows no type for it)",
    [FilterAsId]: filterAs.ast
  })

/** Like `AnyJson`, for a field that must be present (any value, but not absent). @since 0.1.0 */
export const AnyJsonPresent = (filterAs: Schema.Schema.Any) =>
  AnyJson(filterAs).pipe(Schema.filter((value) => value !== undefined || "is required"))

/** Integer epoch seconds. @since 0.1.0 */
export const Timestamp = Schema.Number.pipe(Schema.int(), Schema.nonNegative()).annotations({
  title: "epoch seconds",
  description: "integer epoch seconds",
  [FieldTypeId]: "date"
})

/** Integer epoch milliseconds (`*Milliseconds` fields, and the callout action's `createdAt`). @since 0.1.0 */
export const TimestampMillis = Schema.Number.pipe(Schema.int(), Schema.nonNegative()).annotations({
  title: "epoch milliseconds",
  description: "integer epoch milliseconds",
  [FieldTypeId]: "date"
})

/** A calendar day `YYYY-MM-DD`. @since 0.1.0 */
export const CalendarDay = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/)).annotations({
  title: "calendar day",
  description: "calendar day YYYY-MM-DD",
  [FieldTypeId]: "date"
})

/** Custom properties keyed by property id; values of any type pass through. @since 0.1.0 */
export const Properties = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  description: "custom properties keyed by property id"
})

/** The entities delivered whole, which may carry custom `properties` (see `PropertyDefinition`). @since 0.1.0 */
export const entityNames = [
  "tour",
  "shipment",
  "order",
  "documentLink",
  "operatorUserInvite",
  "operatorUser",
  "shipper",
  "shipperTeam",
  "shipperUser",
  "shipperAddress",
  "mailbox",
  "transportDraft",
  "carrier",
  "carrierTeam",
  "carrierUser",
  "leg",
  "comment",
  "commentReaction",
  "task",
  "sequenceInvocation"
] as const

/** @since 0.1.0 */
export type EntityName = (typeof entityNames)[number]

const entity = <Fields extends Schema.Struct.Fields>(
  name: EntityName,
  identifier: string,
  description: string,
  fields: Fields
) =>
  Schema.Struct({ id: Schema.String, ...fields, properties: optional(Properties) }, OpenFields).annotations({
    identifier,
    description,
    [EntityId]: name
  })

/**
 * A tour: the spec's `id`, `status` (values unlisted), `substatus`, `properties`, and the fields
 * of a generated tour.
 * @since 0.1.0
 */
export const Tour = entity("tour", "Tour", "A tour.", {
  status: Schema.String,
  substatus: optional(Schema.NullOr(Schema.String)),
  name: optional(Schema.NullOr(Schema.String)),
  draftId: optional(Schema.NullOr(Schema.String)),
  triggerAt: optional(Timestamp),
  triggerDate: optional(CalendarDay),
  timezone: optional(Schema.String),
  vehicleClass: optional(Schema.NullOr(Schema.String)),
  vehicleClassReason: optional(oneOf("preserved", "recalculated", "no-class-fits")),
  stops: optional(Schema.Array(OpenObject)),
  createdAt: optional(Timestamp)
})

/** @since 0.1.0 */
export type Tour = typeof Tour.Type

/**
 * The tour of a `callout-action-created` payload, delivered as `id` and `properties` only; open,
 * so a whole tour decodes before `redact` reduces it.
 * @since 0.1.0
 */
export const CalloutTour = Schema.Struct(
  { id: Schema.String, properties: optional(Properties) },
  OpenFields
).annotations({
  identifier: "CalloutTour",
  description: "The tour a callout action was raised against, reduced to id and properties.",
  [EntityId]: "tour"
})

/** @since 0.1.0 */
export type CalloutTour = typeof CalloutTour.Type

/** @since 0.1.0 */
export const Shipment = entity("shipment", "Shipment", "A shipment.", {
  status: optional(AnyJson(Schema.String))
})

/** @since 0.1.0 */
export type Shipment = typeof Shipment.Type

/** @since 0.1.0 */
export const Order = entity("order", "Order", "An order.", {})

/** @since 0.1.0 */
export type Order = typeof Order.Type

/** A link between a document and an entity; a task's PDF receipt has `targetEntityType` `task`. @since 0.1.0 */
export const DocumentLink = entity("documentLink", "DocumentLink", "A link between a document and an entity.", {
  targetEntityType: optional(Schema.String),
  targetEntityId: optional(AnyJson(Schema.String))
})

/** @since 0.1.0 */
export type DocumentLink = typeof DocumentLink.Type

/** @since 0.1.0 */
export const OperatorUserInvite = entity(
  "operatorUserInvite",
  "OperatorUserInvite",
  "An invitation of an operator user.",
  {}
)

/** @since 0.1.0 */
export const OperatorUser = entity("operatorUser", "OperatorUser", "An operator user.", {})

/** @since 0.1.0 */
export const Shipper = entity("shipper", "Shipper", "A shipper.", {})

/** @since 0.1.0 */
export const ShipperTeam = entity("shipperTeam", "ShipperTeam", "A team of a shipper.", {})

/** @since 0.1.0 */
export const ShipperUser = entity("shipperUser", "ShipperUser", "A user of a shipper.", {})

/** @since 0.1.0 */
export const ShipperAddress = entity("shipperAddress", "ShipperAddress", "An address of a shipper.", {})

/** Mailbox status values. @since 0.1.0 */
export const MailboxStatus = oneOf("active", "inactive").annotations({ identifier: "MailboxStatus" })

/** @since 0.1.0 */
export type MailboxStatus = typeof MailboxStatus.Type

/** @since 0.1.0 */
export const Mailbox = entity("mailbox", "Mailbox", "A mailbox drafts are decoded from.", {
  status: optional(MailboxStatus)
})

/** The recurring schedule of a draft in events, typed leniently: the draft is delivered as stored. @since 0.1.0 */
export const RecurringSchedule = Schema.Struct(
  {
    cronExpressions: optional(Schema.Array(Schema.String)),
    timezone: optional(Schema.String),
    leadTimeDays: optional(Schema.Number),
    startsAt: optional(Schema.NullOr(Timestamp)),
    endsAt: optional(Schema.NullOr(Timestamp)),
    weekdayTimeOffsets: optional(Schema.Record({ key: Schema.String, value: Schema.Number })),
    vehicleClassAdjustmentStrategy: optional(oneOf("preserve", "recalculate"))
  },
  OpenFields
).annotations({ identifier: "RecurringSchedule", description: "The schedule of a recurring master." })

/** A transport draft, as the drafts API answers it. @since 0.1.0 */
export const TransportDraft = entity("transportDraft", "TransportDraft", "A transport draft (contract §2).", {
  origin: oneOf("decode", "hub", "manual"),
  status: oneOf("draft", "review-order", "review-rfq", "active-recurring", "paused-recurring", "ended-recurring"),
  isValid: optional(Schema.NullOr(Schema.Boolean)),
  name: optional(Schema.NullOr(Schema.String)),
  transport: optional(Schema.NullOr(OpenObject)),
  transportShapeId: optional(Schema.String),
  inboxId: optional(Schema.NullOr(Schema.String)),
  payload: optional(Schema.NullOr(OpenObject)),
  templateDraftId: optional(Schema.NullOr(Schema.String)),
  recurringSchedule: optional(Schema.NullOr(RecurringSchedule)),
  createdAt: optional(Timestamp),
  updatedAt: optional(Timestamp)
})

/** @since 0.1.0 */
export type TransportDraft = typeof TransportDraft.Type

/** A callout (a tour offered to a carrier) with bidding stats; secret auctions only `suggestedBid`. @since 0.1.0 */
export const CalloutWithStats = Schema.Struct(
  {
    id: Schema.String,
    currentBid: optional(AnyJson(Schema.Number)),
    bidCount: optional(AnyJson(Schema.Number)),
    isWinning: optional(AnyJson(Schema.Boolean)),
    suggestedBid: AnyJsonPresent(Schema.Number)
  },
  OpenFields
).annotations({
  identifier: "CalloutWithStats",
  description: "A callout enriched with bidding stats; secret auctions carry only suggestedBid."
})

/** @since 0.1.0 */
export type CalloutWithStats = typeof CalloutWithStats.Type

/** @since 0.1.0 */
export const Carrier = entity("carrier", "Carrier", "A carrier.", {})

/** @since 0.1.0 */
export const CarrierTeam = entity("carrierTeam", "CarrierTeam", "A team of a carrier.", {})

/** @since 0.1.0 */
export const CarrierUser = entity("carrierUser", "CarrierUser", "A user of a carrier.", {})

const writeOffFields = {
  note: optional(AnyJson(Schema.String)),
  writtenOffBy: AnyJsonPresent(Schema.String),
  writtenOffAt: optional(AnyJson(Timestamp))
}

const NeverOnLost = Schema.Never.annotations({ message: () => "is never present on a Lost load" })

/** The write-off of a load whose goods were lost. It never carries `disposedAt`/`disposedBy`. @since 0.1.0 */
export const LostWriteOff = Schema.Struct(
  {
    reason: Schema.Literal("Lost"),
    ...writeOffFields,
    disposedAt: optional(NeverOnLost),
    disposedBy: optional(NeverOnLost)
  },
  OpenFields
).annotations({ identifier: "LostWriteOff", description: "Write-off of lost goods; never disposed." })

/** The write-off of damaged goods; once disposed it carries both `disposedAt` and `disposedBy`. @since 0.1.0 */
export const DamagedWriteOff = Schema.Struct(
  {
    reason: Schema.Literal("Damaged"),
    ...writeOffFields,
    disposedAt: optional(Timestamp),
    disposedBy: optional(AnyJson(Schema.String))
  },
  OpenFields
)
  .pipe(
    together(
      "disposedAt",
      "disposedBy",
      "is required once the load is disposed (disposedAt and disposedBy come together)"
    )
  )
  .annotations({
    identifier: "DamagedWriteOff",
    description: "Write-off of damaged goods; once disposed it carries disposedAt and disposedBy."
  })

/** Why a Perished load was written off. @since 0.1.0 */
export const WriteOff = Schema.Union(LostWriteOff, DamagedWriteOff).annotations({ identifier: "WriteOff" })

/** @since 0.1.0 */
export type WriteOff = typeof WriteOff.Type

/** The statuses a load ends in: `Returned` (goods intact) or `Perished` (written off, terminal). @since 0.1.0 */
export const terminalLoadStatuses = ["Returned", "Perished"] as const

/**
 * A load of a leg; only a `Perished` load carries a `writeOff`, and it must. Other statuses pass
 * as strings.
 * @since 0.1.0
 */
export const LegLoad = Schema.Struct(
  {
    id: Schema.String,
    status: optional(AnyJson(Schema.String)),
    returnShipmentId: optional(AnyJson(Schema.String)),
    writeOff: optional(WriteOff)
  },
  OpenFields
)
  .pipe(
    Schema.filter(
      (load) =>
        load.status === "Perished" && load.writeOff === undefined
          ? { path: ["writeOff"], message: "is required on a Perished load" }
          : load.status !== "Perished" && load.writeOff !== undefined
            ? { path: ["writeOff"], message: "is only present on a Perished load" }
            : undefined,
      {
        jsonSchema: {
          if: { properties: { status: { const: "Perished" } }, required: ["status"] },
          // biome-ignore lint/suspicious/noThenProperty: the JSON Schema if/then/else keyword
          then: { required: ["writeOff"] },
          else: { not: { required: ["writeOff"] } }
        }
      }
    )
  )
  .annotations({
    identifier: "LegLoad",
    description: "A load of a leg; it may end Returned or Perished (then with its write-off)."
  })

/** @since 0.1.0 */
export type LegLoad = typeof LegLoad.Type

/** A leg; leg events carry the whole leg after the transition. @since 0.1.0 */
export const Leg = entity("leg", "Leg", "A leg of a shipment; delivered whole after each transition.", {
  status: optional(AnyJson(Schema.String)),
  loads: optional(Schema.Array(LegLoad))
})

/** @since 0.1.0 */
export type Leg = typeof Leg.Type

/** @since 0.1.0 */
export const Comment = entity("comment", "Comment", "A comment.", {})

/** @since 0.1.0 */
export const CommentReaction = entity("commentReaction", "CommentReaction", "A reaction to a comment.", {})

/** @since 0.1.0 */
export const SequenceInvocation = entity("sequenceInvocation", "SequenceInvocation", "An invocation of a sequence.", {})
