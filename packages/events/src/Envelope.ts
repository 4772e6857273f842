/** The delivery envelope: every delivery body is exactly `{ id, type, createdAt, payload }`. @since 0.1.0 */
import type { Issue } from "@waybill/core/Issue"
import * as IssueM from "@waybill/core/Issue"
import * as JsonDepth from "@waybill/core/JsonDepth"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Timestamp } from "./Entity.js"
import { maxPayloadDepth } from "./EventOutbox.js"
import { all, EventType, isEventType } from "./EventType.js"
import { fromParseError } from "./internal/issues.js"
import { pascal } from "./internal/names.js"
import { decodePayload, type PayloadOf, parseOptions, schemas } from "./Payload.js"

/** An event id (`evt_…`). @since 0.1.0 */
export const EventId = Schema.String.pipe(
  Schema.pattern(/^evt_\S+$/, { message: () => "must be an event id (evt_…)" })
).annotations({ title: "event id", description: "evt_… (also sent as X-Event-Id)" })

/** The envelope of any event, its payload not yet checked. @since 0.1.0 */
export const Envelope = Schema.Struct({
  id: EventId,
  type: EventType,
  createdAt: Timestamp,
  payload: Schema.Unknown
}).annotations({ identifier: "EventEnvelope", description: "A delivery body: exactly id, type, createdAt, payload." })

/** The envelope of one event type. @since 0.1.0 */
export interface EnvelopeOf<T extends EventType> {
  readonly id: string
  readonly type: T
  readonly createdAt: number
  readonly payload: PayloadOf<T>
}

/** The envelope of any event, discriminated by `type` so a `switch` narrows the payload. @since 0.1.0 */
export type AnyEnvelope = { readonly [K in EventType]: EnvelopeOf<K> }[EventType]

const envelopes = new Map<EventType, Schema.Schema.AnyNoContext>(
  all.map((type) => [
    type,
    Schema.Struct({
      id: EventId,
      type: Schema.Literal(type),
      createdAt: Timestamp,
      payload: schemas[type]
    }).annotations({
      identifier: `${pascal(type)}Event`,
      description: `The delivery body of ${type}.`
    })
  ])
)

/** The envelope schema of one event type, its payload typed. @since 0.1.0 */
export const envelopeSchema = <T extends EventType>(type: T): Schema.Schema<EnvelopeOf<T>, EnvelopeOf<T>> =>
  envelopes.get(type) as Schema.Schema<EnvelopeOf<T>, EnvelopeOf<T>>

const decodeShell = Schema.decodeUnknownEither(Envelope)

/**
 * Decodes a delivery body (the four keys, a catalogue type, a valid payload), else every issue
 * with a dotted path (`payload.tour.id`). A body deeper than `EventOutbox.maxPayloadDepth` + 1
 * gets one issue and is not decoded, so it cannot exhaust a receiver's stack.
 * @since 0.1.0
 */
export const decode = (input: unknown): Either.Either<AnyEnvelope, ReadonlyArray<Issue>> => {
  const tooDeep = JsonDepth.depthIssue(input, maxPayloadDepth + 1)
  if (Option.isSome(tooDeep)) return Either.left([tooDeep.value])
  const shell = decodeShell(input, parseOptions)
  const record = typeof input === "object" && input !== null && !Array.isArray(input) ? input : undefined
  const type = record !== undefined && "type" in record && isEventType(record.type) ? record.type : undefined
  const payload =
    type !== undefined && record !== undefined && "payload" in record
      ? decodePayload(type, record.payload)
      : Either.left<ReadonlyArray<Issue>>([])
  if (Either.isRight(shell) && Either.isRight(payload)) {
    return Either.right({ ...shell.right, payload: payload.right } as AnyEnvelope)
  }
  const issues = [
    ...(Either.isLeft(shell) ? fromParseError(shell.left) : []),
    ...(Either.isLeft(payload) ? IssueM.prefix(payload.left, "payload") : [])
  ]
  return Either.left(issues)
}

/** Decodes a raw delivery body (the bytes received, as text); invalid JSON is one issue at `""`. @since 0.1.0 */
export const decodeJson = (body: string): Either.Either<AnyEnvelope, ReadonlyArray<Issue>> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return Either.left([IssueM.make("", "is not valid JSON")])
  }
  return decode(parsed)
}
