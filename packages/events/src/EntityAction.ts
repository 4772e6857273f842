/**
 * Schemas of the action records payloads carry next to the entity acted on: an `id`, `createdAt`
 * timestamps and a `payload` whose `type` is the verb; other fields pass through.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { OpenFields, Timestamp, TimestampMillis } from "./Entity.js"
import { oneOf, optional } from "./internal/schemas.js"

/** The `payload` of an action record: `type` is the verb; the rest mirrors the request. @since 0.1.0 */
export const ActionPayload = Schema.Struct({ type: Schema.String }, OpenFields).annotations({
  identifier: "ActionPayload",
  description: "type is the verb of the action; other fields mirror the request."
})

const action = <Fields extends Schema.Struct.Fields>(identifier: string, description: string, fields: Fields) =>
  Schema.Struct(
    {
      id: Schema.String,
      payload: ActionPayload,
      createdAt: Timestamp,
      createdAtMilliseconds: TimestampMillis,
      ...fields
    },
    OpenFields
  ).annotations({ identifier, description })

/** @since 0.1.0 */
export const TourAction = action("TourAction", "An action on a tour; carrier-integration internals redacted.", {})

/** @since 0.1.0 */
export type TourAction = typeof TourAction.Type

/** @since 0.1.0 */
export const ShipperAction = action("ShipperAction", "An action on a shipper.", {})

/** @since 0.1.0 */
export const ShipperTeamAction = action("ShipperTeamAction", "An action on a shipper team.", {})

/** @since 0.1.0 */
export const ShipperUserAction = action("ShipperUserAction", "An action on a shipper user.", {})

/**
 * A callout action. Unlike every other timestamp, `createdAt` is epoch milliseconds (older
 * deliveries carried seconds: see `Consumer.calloutCreatedAtMillis`).
 * @since 0.1.0
 */
export const CalloutAction = action(
  "CalloutAction",
  "An action on callouts. createdAt is epoch milliseconds, equal to createdAtMilliseconds.",
  {
    createdAt: TimestampMillis.annotations({
      description:
        "integer epoch milliseconds (deliveries sent before this change carried seconds: below 10^12 means seconds)"
    })
  }
)

/** @since 0.1.0 */
export type CalloutAction = typeof CalloutAction.Type

/** @since 0.1.0 */
export const SequenceInvocationAction = action("SequenceInvocationAction", "An action on a sequence invocation.", {})

/** An action on a transport draft. @since 0.1.0 */
export const TransportDraftAction = action("TransportDraftAction", "An action on a transport draft (contract §2).", {
  draftId: optional(Schema.String),
  payload: Schema.Struct(
    {
      type: oneOf("activate-recurring", "pause-recurring", "resume-recurring", "end-recurring"),
      reason: optional(Schema.String)
    },
    OpenFields
  ).annotations({ identifier: "TransportDraftActionPayload" }),
  actor: optional(
    Schema.Struct(
      {
        type: Schema.String.pipe(
          Schema.minLength(1, { message: () => "must be a non-empty string" }),
          Schema.annotations({
            description: "who acted: api-key and system for the service's own actions, any other kind for a host's"
          })
        ),
        id: Schema.String
      },
      OpenFields
    ).annotations({ identifier: "Actor" })
  )
})

/** @since 0.1.0 */
export type TransportDraftAction = typeof TransportDraftAction.Type

/** @since 0.1.0 */
export const CarrierAction = action("CarrierAction", "An action on a carrier.", {})

/** @since 0.1.0 */
export const CarrierTeamAction = action("CarrierTeamAction", "An action on a carrier team.", {})

/** @since 0.1.0 */
export const CarrierUserAction = action("CarrierUserAction", "An action on a carrier user.", {})

/** @since 0.1.0 */
export const DocumentLinkAction = action("DocumentLinkAction", "An action on a document link.", {})

/**
 * A leg lifecycle transition (pickup, dropoff, delivery, failure, cancellation, tour assignment);
 * the verb is in `payload.type`.
 * @since 0.1.0
 */
export const LegAction = action("LegAction", "A leg lifecycle transition; the verb is in payload.type.", {})

/** @since 0.1.0 */
export type LegAction = typeof LegAction.Type
