/**
 * `POST /events` (contract §5), the embedding seam: `{ type, payload }` is checked against the
 * catalogue (every issue, at `type` or `payload.<path>`), the catalogue's redaction rules are
 * applied, and the event is recorded through the outbox like any event the service raises.
 *
 * @since 0.1.0
 */
import * as GroupCommitWriter from "@waybill/core/GroupCommit"
import * as Issue from "@waybill/core/Issue"
import * as JsonDepth from "@waybill/core/JsonDepth"
import * as Tracing from "@waybill/core/Tracing"
import * as ValidationError from "@waybill/core/ValidationError"
import { CurrentWorkspace, type WorkspaceId } from "@waybill/core/Workspace"
import { EventOutbox, type NewEvent, type RecordedEvent } from "@waybill/events/EventOutbox"
import { isEventType, notInCatalogue } from "@waybill/events/EventType"
import { decodePayload } from "@waybill/events/Payload"
import { redact } from "@waybill/events/Producer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * The body of `POST /events`, for documentation; `decodeEvent` is what checks it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PublishEvent = Schema.Struct({
  type: Schema.String.annotations({ description: "A catalogue event type" }),
  payload: Schema.Unknown.annotations({ description: "The payload of that event type (see the webhooks section)" })
}).annotations({ identifier: "PublishEvent" })

/**
 * The answer of `POST /events` (202).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Published = Schema.Struct({ id: Schema.String }).annotations({ identifier: "PublishedEvent" })

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Checks a `POST /events` body: every issue, or the event to record with its payload redacted.
 * A body nested deeper than `JsonDepth.maxDepth` levels (contract §1) gets the one issue where
 * the limit is crossed, as over HTTP, before anything recursive sees it.
 *
 * @since 0.1.0
 * @category validation
 */
export const decodeEvent = (input: unknown): Either.Either<NewEvent, ReadonlyArray<Issue.Issue>> => {
  const tooDeep = JsonDepth.depthIssue(input)
  if (Option.isSome(tooDeep)) return Either.left([tooDeep.value])
  if (!isRecord(input)) return Either.left([Issue.make("", "must be a JSON object")])
  const issues: Array<Issue.Issue> = []
  for (const key of Object.keys(input)) {
    if (key !== "type" && key !== "payload") issues.push(Issue.make(key, "is not a known field"))
  }
  const type = Object.hasOwn(input, "type") ? input.type : undefined
  const payload = Object.hasOwn(input, "payload") ? input.payload : undefined
  if (type === undefined) issues.push(Issue.make("type", "is required"))
  else if (!isEventType(type)) issues.push(Issue.make("type", notInCatalogue(type)))
  if (payload === undefined) issues.push(Issue.make("payload", "is required"))
  if (!isEventType(type) || payload === undefined) return Either.left(issues)
  return Either.match(decodePayload(type, payload), {
    onLeft: (found) => Either.left([...issues, ...Issue.prefix(found, "payload")]),
    onRight: (decoded) =>
      issues.length > 0 ? Either.left(issues) : Either.right({ type, payload: redact(type, decoded) })
  })
}

/**
 * Group commit for `publish`: while one write is in flight, the events published meanwhile wait
 * and are recorded together by the next (one statement per workspace, and one notification),
 * so a busy intake costs the database far fewer statements. An event published when nothing is
 * being written is written at once. Each caller still gets its own event or its own failure.
 * Without it in context, every event is its own write.
 *
 * @since 0.1.0
 * @category tags
 */
export class GroupCommit extends Context.Tag("@waybill/webhooks/EventIntake/GroupCommit")<
  GroupCommit,
  { readonly record: (workspaceId: WorkspaceId, event: NewEvent) => Effect.Effect<RecordedEvent> }
>() {}

/**
 * The group commit over the `EventOutbox` in context; its writer runs while the layer lives.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerGroupCommit: Layer.Layer<GroupCommit, never, EventOutbox> = Layer.scoped(
  GroupCommit,
  Effect.gen(function* () {
    const outbox = yield* EventOutbox
    const submit = yield* GroupCommitWriter.make({
      key: (entry: { readonly workspaceId: WorkspaceId; readonly event: NewEvent }) => entry.workspaceId,
      write: (workspaceId, entries) =>
        outbox.publish(
          workspaceId,
          entries.map((entry) => entry.event)
        )
    })
    return GroupCommit.of({ record: (workspaceId, event) => submit({ workspaceId, event }) })
  })
)

/**
 * Records `POST /events` bodies in the caller's workspace, over the `EventOutbox` and, when one is
 * in context, the `GroupCommit` it was built with: a handler called for every event resolves
 * them once, not on each call.
 *
 * @since 0.1.0
 * @category publishing
 */
export const publisher: Effect.Effect<
  (input: unknown) => Effect.Effect<RecordedEvent, ValidationError.ValidationError, CurrentWorkspace>,
  never,
  EventOutbox
> = Effect.gen(function* () {
  const outbox = yield* EventOutbox
  const groupCommit = yield* Effect.serviceOption(GroupCommit)
  // `publish` is atomic by itself: one event needs no transaction of its own. With a
  // `GroupCommit`, it shares a write with the events published meanwhile.
  const record = Option.match(groupCommit, {
    onNone: () => (workspaceId: WorkspaceId, event: NewEvent) =>
      Effect.map(outbox.publish(workspaceId, [event]), (recorded) => recorded[0]!),
    onSome: (commit) => commit.record
  })
  return (input: unknown) =>
    Effect.flatMap(CurrentWorkspace, (workspace) =>
      Either.match(decodeEvent(input), {
        onLeft: (issues) => Effect.fail(ValidationError.fromIssues(issues, "event")),
        onRight: (event) => record(workspace.id, event)
      })
    ).pipe(
      // No stack trace for the span: it would cost an `Error` on every event; and no span at all
      // while no tracer is on.
      Tracing.withSpan("EventIntake.publish", { captureStackTrace: false })
    )
})

/**
 * Records a `POST /events` body in the caller's workspace (`publisher`, resolved for this call).
 *
 * @since 0.1.0
 * @category publishing
 */
export const publish = (
  input: unknown
): Effect.Effect<RecordedEvent, ValidationError.ValidationError, EventOutbox | CurrentWorkspace> =>
  Effect.flatMap(publisher, (record) => record(input))
