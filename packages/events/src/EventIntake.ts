/**
 * `POST /events`, the embedding seam: `{ type, payload }` checked against the catalogue, redacted
 * by its rules, and recorded through the outbox like any event the service raises.
 * @since 0.2.0
 */
import * as GroupCommitWriter from "@waybill/core/GroupCommit"
import * as Id from "@waybill/core/Id"
import * as Idempotency from "@waybill/core/Idempotency"
import * as Issue from "@waybill/core/Issue"
import * as JsonInput from "@waybill/core/JsonInput"
import * as JsonText from "@waybill/core/JsonText"
import * as TraceContext from "@waybill/core/TraceContext"
import { Transactor } from "@waybill/core/Transactor"
import * as ValidationError from "@waybill/core/ValidationError"
import { CurrentWorkspace, type WorkspaceId } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { EventOutbox, type NewEvent, type RecordedEvent } from "./EventOutbox.js"
import { isEventType, notInCatalogue } from "./EventType.js"
import { decodePayload } from "./Payload.js"
import { redact } from "./Producer.js"

/** The length an ordering key may have, in characters (contract §8). @since 0.2.0 */
export const orderingKeyLength = { min: 1, max: 255 } as const

/** The body of `POST /events`, for documentation; `decodeEvent` is what checks it. @since 0.2.0 */
export const PublishEvent = Schema.Struct({
  type: Schema.String.annotations({ description: "A catalogue event type" }),
  payload: Schema.Unknown.annotations({ description: "The payload of that event type (see the webhooks section)" }),
  orderingKey: Schema.optional(
    Schema.String.pipe(Schema.minLength(orderingKeyLength.min), Schema.maxLength(orderingKeyLength.max)).annotations({
      description:
        'Deliveries of events with the same key to a webhook with `"ordering": "key"` are made one at a time, in event order; events without a key are not ordered'
    })
  )
}).annotations({ identifier: "PublishEvent" })

/** The answer of `POST /events` (202). @since 0.2.0 */
export const Published = Schema.Struct({ id: Schema.String }).annotations({ identifier: "PublishedEvent" })

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// Counted in code points, as JSON Schema's `maxLength` and PostgreSQL's `length` count.
const orderingKeyProblem = (key: unknown): string | undefined => {
  if (typeof key !== "string") return "must be a string"
  const text = JsonText.problemOf(key)
  if (text !== undefined) return text
  let length = 0
  for (const _ of key) if (++length > orderingKeyLength.max) break
  return length < orderingKeyLength.min || length > orderingKeyLength.max
    ? `must be ${orderingKeyLength.min} to ${orderingKeyLength.max} characters`
    : undefined
}

/** What `decodeEvent` accepts besides the body of `POST /events`. @since 0.2.0 */
export interface DecodeOptions {
  /**
   * Whether a `traceparent` field is taken (an event published in process, which has no request
   * header): a valid W3C `traceparent`, stored as the event's trace.
   */
  readonly traceparent?: boolean | undefined
}

/**
 * The issue of a `traceparent` given as a field (in process), at `traceparent`: none when absent or a
 * valid W3C `traceparent`.
 * @since 0.3.0
 */
export const traceparentIssue = (traceparent: unknown): Issue.Issue | undefined =>
  traceparent === undefined || (typeof traceparent === "string" && Option.isSome(TraceContext.parse(traceparent)))
    ? undefined
    : Issue.make("traceparent", "must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)")

const fieldsOf = (options: DecodeOptions): ReadonlyArray<string> =>
  options.traceparent === true ? ["type", "payload", "orderingKey", "traceparent"] : ["type", "payload", "orderingKey"]

/**
 * Checks a `POST /events` body: every issue (at `type`, `payload.<path>`, `orderingKey`), or the
 * event to record with its payload redacted. Depth, reserved keys and non-finite numbers are
 * refused as over HTTP (`JsonInput`).
 * @since 0.2.0
 */
export const decodeEvent = (
  input: unknown,
  options: DecodeOptions = {}
): Either.Either<NewEvent, ReadonlyArray<Issue.Issue>> => {
  // Text is left alone: the outbox stores an event's body as text, whatever it holds.
  const checked = JsonInput.inspect(input, { text: false })
  if (checked.tooDeep !== undefined) return Either.left([checked.tooDeep])
  if (!isRecord(input)) return Either.left([Issue.make("", "must be a JSON object")])
  const issues: Array<Issue.Issue> = []
  const fields = fieldsOf(options)
  for (const key of Object.keys(input)) {
    if (!fields.includes(key)) issues.push(Issue.make(key, "is not a known field"))
  }
  issues.push(...checked.issues.filter((issue) => !Object.hasOwn(input, issue.path)))
  const field = (name: string): unknown => (Object.hasOwn(input, name) ? input[name] : undefined)
  const type = field("type")
  const payload = field("payload")
  const orderingKey = field("orderingKey")
  const traceparent = options.traceparent === true ? field("traceparent") : undefined
  if (type === undefined) issues.push(Issue.make("type", "is required"))
  else if (!isEventType(type)) issues.push(Issue.make("type", notInCatalogue(type)))
  if (payload === undefined) issues.push(Issue.make("payload", "is required"))
  const keyProblem = orderingKey === undefined ? undefined : orderingKeyProblem(orderingKey)
  if (keyProblem !== undefined) issues.push(Issue.make("orderingKey", keyProblem))
  const trace =
    traceparent === undefined ? undefined : TraceContext.parse(typeof traceparent === "string" ? traceparent : null)
  const traceProblem = traceparentIssue(traceparent)
  if (traceProblem !== undefined) issues.push(traceProblem)
  if (!isEventType(type) || payload === undefined) return Either.left(issues)
  return Either.match(decodePayload(type, payload), {
    onLeft: (found) => Either.left([...issues, ...Issue.prefix(found, "payload")]),
    onRight: (decoded) =>
      issues.length > 0
        ? Either.left(issues)
        : Either.right({
            type,
            payload: redact(type, decoded),
            ...(typeof orderingKey === "string" ? { orderingKey } : {}),
            ...(trace !== undefined && Option.isSome(trace) ? { traceparent: TraceContext.format(trace.value) } : {})
          })
  })
}

/**
 * Group commit for `publish`: events published while a write is in flight are recorded together
 * by the next write, each caller getting its own event or failure. Without it in context, every
 * event is its own write.
 * @since 0.2.0
 */
export class GroupCommit extends Context.Tag("@waybill/events/EventIntake/GroupCommit")<
  GroupCommit,
  {
    readonly record: (workspaceId: WorkspaceId, event: NewEvent) => Effect.Effect<RecordedEvent>
    /**
     * `record` with its request's idempotency record in the same write, when the outbox can
     * (`EventOutbox.publishIdempotent`); `undefined`, nothing recorded, when the key is kept already.
     */
    readonly recordIdempotent?:
      | ((
          workspaceId: WorkspaceId,
          event: NewEvent,
          record: Idempotency.IdempotencyRecord
        ) => Effect.Effect<RecordedEvent | undefined>)
      | undefined
  }
>() {}

/** The group commit over the `EventOutbox` in context; its writer runs while the layer lives. @since 0.2.0 */
export const layerGroupCommit: Layer.Layer<GroupCommit, never, EventOutbox> = Layer.scoped(
  GroupCommit,
  Effect.gen(function* () {
    const outbox = yield* EventOutbox
    const publishIdempotent = outbox.publishIdempotent
    const submit = yield* GroupCommitWriter.make({
      key: (entry: {
        readonly workspaceId: WorkspaceId
        readonly event: NewEvent
        readonly record?: Idempotency.IdempotencyRecord
      }) => entry.workspaceId,
      write: (workspaceId, entries): Effect.Effect<ReadonlyArray<RecordedEvent | undefined>> =>
        publishIdempotent !== undefined && entries.some((entry) => entry.record !== undefined)
          ? publishIdempotent(workspaceId, entries)
          : outbox.publish(
              workspaceId,
              entries.map((entry) => entry.event)
            )
    })
    return GroupCommit.of({
      // Without a record, an entry is always recorded.
      record: (workspaceId, event) => submit({ workspaceId, event }) as Effect.Effect<RecordedEvent>,
      recordIdempotent:
        publishIdempotent === undefined
          ? undefined
          : (workspaceId, event, record) => submit({ workspaceId, event, record })
    })
  })
)

/**
 * Records `POST /events` bodies in the caller's workspace, over the `EventOutbox` and the
 * `GroupCommit` if one is in context, resolved once for every call.
 * @since 0.2.0
 */
export const publisher: Effect.Effect<
  (input: unknown) => Effect.Effect<RecordedEvent, ValidationError.ValidationError, CurrentWorkspace>,
  never,
  EventOutbox
> = Effect.gen(function* () {
  const outbox = yield* EventOutbox
  const groupCommit = yield* Effect.serviceOption(GroupCommit)
  // `publish` is atomic by itself: one event needs no transaction of its own.
  const record = Option.match(groupCommit, {
    onNone: () => (workspaceId: WorkspaceId, event: NewEvent) =>
      Effect.map(outbox.publish(workspaceId, [event]), (recorded) => recorded[0]!),
    // The write runs in the group commit's fiber: the request's trace goes with the event.
    onSome: (commit) => (workspaceId: WorkspaceId, event: NewEvent) =>
      Effect.flatMap(TraceContext.current, (traceparent) => commit.record(workspaceId, { ...event, traceparent }))
  })
  // No span of its own (nor in `idempotentPublisher`): the request's span covers it
  // (docs/decisions/0091).
  return (input: unknown) =>
    Effect.flatMap(CurrentWorkspace, (workspace) =>
      Either.match(decodeEvent(input), {
        onLeft: (issues) => Effect.fail(ValidationError.fromIssues(issues, "event")),
        onRight: (event) => record(workspace.id, event)
      })
    )
})

/** The answer of `POST /events`, kept for its `Idempotency-Key`: the event's id. @since 0.2.0 */
export type PublishedEvent = typeof Published.Type

const decodePublished = Schema.decodeUnknownSync(Published)

/**
 * `publisher` once per workspace and `Idempotency-Key`: the answer (202, `{ "id": … }`) is kept in
 * the same write as the event; the same key and body again replays it and records nothing.
 * @since 0.2.0
 */
export const idempotentPublisher: Effect.Effect<
  (
    input: unknown,
    key: string
  ) => Effect.Effect<
    Idempotency.Outcome<PublishedEvent>,
    ValidationError.ValidationError | Idempotency.IdempotencyKeyReused | Idempotency.IdempotencyKeyInFlight,
    CurrentWorkspace | Idempotency.Idempotency
  >,
  never,
  EventOutbox | Transactor
> = Effect.gen(function* () {
  const outbox = yield* EventOutbox
  const transactor = yield* Transactor
  const groupCommit = yield* Effect.serviceOption(GroupCommit)
  const shared = Option.flatMap(groupCommit, (commit) => Option.fromNullable(commit.recordIdempotent))
  const publishIdempotent = outbox.publishIdempotent
  // Whether the event was recorded with its record (false: the key was kept already).
  const write = (
    store: Idempotency.IdempotencyStore["Type"],
    workspaceId: WorkspaceId,
    event: NewEvent,
    record: Idempotency.IdempotencyRecord
  ): Effect.Effect<boolean> =>
    Option.isSome(shared)
      ? Effect.flatMap(TraceContext.current, (traceparent) =>
          Effect.map(shared.value(workspaceId, { ...event, traceparent }, record), (recorded) => recorded !== undefined)
        )
      : publishIdempotent !== undefined
        ? Effect.map(publishIdempotent(workspaceId, [{ event, record }]), ([recorded]) => recorded !== undefined)
        : Idempotency.writeInTransaction(transactor, store, record, outbox.publish(workspaceId, [event]))
  return Idempotency.operation({
    operation: "POST /events",
    create: (input, pending, store) =>
      Either.match(decodeEvent(input), {
        onLeft: (issues) => Effect.fail(ValidationError.fromIssues(issues, "event")),
        onRight: (event) =>
          Effect.gen(function* () {
            const id = yield* Id.make("evt")
            // What `POST /events` answers, `JSON.stringify({ id })`.
            return yield* Idempotency.complete(
              pending,
              { value: { id }, status: 202, body: `{"id":${JSON.stringify(id)}}` },
              (record) => write(store, pending.workspaceId, { ...event, id }, record)
            )
          })
      }),
    replay: (record) => decodePublished(JSON.parse(record.body))
  })
})

/** Records a `POST /events` body in the caller's workspace (`publisher`, resolved for this call). @since 0.2.0 */
export const publish = (
  input: unknown
): Effect.Effect<RecordedEvent, ValidationError.ValidationError, EventOutbox | CurrentWorkspace> =>
  Effect.flatMap(publisher, (record) => record(input))
