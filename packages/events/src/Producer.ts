/**
 * Producer rules: plain functions that build payloads as the spec demands, and `redact`, the
 * redaction `POST /events` applies. Nothing invents data: fields are kept, reduced or removed.
 * @since 0.1.0
 */
import * as JsonDepth from "@waybill/core/JsonDepth"
import * as ValidationError from "@waybill/core/ValidationError"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Entity from "./Entity.js"
import type * as EntityAction from "./EntityAction.js"
import { maxPayloadDepth } from "./EventOutbox.js"
import type { EventType } from "./EventType.js"
import type { PayloadOf } from "./Payload.js"
import type * as Task from "./Task.js"

/** An event with a payload typed by its event type; assignable to `EventOutbox.NewEvent`. @since 0.1.0 */
export interface Event<T extends EventType> {
  readonly type: T
  readonly payload: PayloadOf<T>
}

/** Builds a typed event. @since 0.1.0 */
export const event = <T extends EventType>(type: T, payload: PayloadOf<T>): Event<T> => ({ type, payload })

type JsonRecord = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// Object.fromEntries defines own properties, so a `__proto__` key stays data, never a prototype.
const pick = (record: JsonRecord, keys: ReadonlyArray<string>): Record<string, unknown> =>
  Object.fromEntries(keys.filter((key) => Object.hasOwn(record, key)).map((key) => [key, record[key]]))

const omit = <A extends JsonRecord>(record: A, keys: ReadonlyArray<string>): A =>
  Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key))) as A

/** The fields a carrier-booking record is reduced to. @since 0.1.0 */
export const carrierBookingFields = ["provider", "carrierId", "carrierBookingId", "trackingRef"] as const

const reduceCarrierBooking = (value: unknown): { readonly keep: boolean; readonly value?: unknown } => {
  if (value === null) return { keep: true, value: null }
  // The kept fields are walked too: a provider payload nested inside one must not survive.
  if (isRecord(value)) return { keep: true, value: stripCarrierInternals(pick(value, carrierBookingFields)) }
  if (Array.isArray(value)) {
    return {
      keep: true,
      value: value.filter(isRecord).map((booking) => stripCarrierInternals(pick(booking, carrierBookingFields)))
    }
  }
  return { keep: false }
}

// Recursive: `redactTourAction` bounds the depth before calling it.
const stripCarrierInternals = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(stripCarrierInternals)
  if (!isRecord(value)) return value
  const entries: Array<readonly [string, unknown]> = []
  for (const [key, inner] of Object.entries(value)) {
    if (key === "providerPayload") continue
    if (key === "carrierBooking") {
      const reduced = reduceCarrierBooking(inner)
      if (reduced.keep) entries.push([key, reduced.value])
      continue
    }
    entries.push([key, stripCarrierInternals(inner)])
  }
  return Object.fromEntries(entries)
}

/**
 * Whether an action verb is an assign action (`assign`, `assign-carrier`, `assign_driver`, not
 * `unassign…` or `reassign…`).
 * @since 0.1.0
 */
export const isAssignAction = (type: string): boolean => /^assign(?:$|[-_A-Z])/.test(type)

/**
 * Redacts a tour action: every `carrierBooking` reduced to `carrierBookingFields`, every
 * `providerPayload` removed, and `payload.preAssignCarrierId` on assign actions. Throws a
 * `ValidationError` for an action deeper than `EventOutbox.maxPayloadDepth`.
 * @since 0.1.0
 */
export const redactTourAction = (action: EntityAction.TourAction): EntityAction.TourAction => {
  const tooDeep = JsonDepth.depthIssue(action, maxPayloadDepth)
  if (Option.isSome(tooDeep)) throw ValidationError.fromIssues([tooDeep.value], "tour action")
  const stripped = stripCarrierInternals(action) as EntityAction.TourAction
  return isAssignAction(stripped.payload.type)
    ? { ...stripped, payload: omit(stripped.payload, ["preAssignCarrierId"]) }
    : stripped
}

/** Removes the internal dispatch context (`payload.dispatchContext`) from a callout action. @since 0.1.0 */
export const redactCalloutAction = <A extends { readonly payload: JsonRecord }>(action: A): A => ({
  ...action,
  payload: omit(action.payload, ["dispatchContext"])
})

/** Reduces a tour to what `callout-action-created` delivers: `id` and `properties`. @since 0.1.0 */
export const reduceCalloutTour = (tour: Entity.CalloutTour): Entity.CalloutTour =>
  pick(tour, ["id", "properties"]) as Entity.CalloutTour

/**
 * Applies the redaction rules to a validated payload: the tour action of `tour-action-created`
 * and `tour-rebuilt`, and the action and tour of `callout-action-created`. Never mutates its input.
 * @since 0.1.0
 */
export const redact = <T extends EventType>(type: T, payload: PayloadOf<T>): PayloadOf<T> => {
  switch (type) {
    case "tour-action-created":
    case "tour-rebuilt": {
      const value = payload as PayloadOf<"tour-action-created" | "tour-rebuilt">
      return { ...value, action: redactTourAction(value.action) } as PayloadOf<T>
    }
    case "callout-action-created": {
      const value = payload as PayloadOf<"callout-action-created">
      return {
        ...value,
        action: redactCalloutAction(value.action),
        ...(value.tour === undefined ? {} : { tour: reduceCalloutTour(value.tour) })
      } as PayloadOf<T>
    }
    default:
      return payload
  }
}

/** The status snapshot a commit relays with its first action. @since 0.1.0 */
export interface StatusSnapshot {
  readonly oldStatus: string
  readonly newStatus: string
}

/** A `tour-action-created` event, the action redacted; `oldStatus`/`newStatus` only with a snapshot. @since 0.1.0 */
export const tourActionCreated = (input: {
  readonly tour: Entity.Tour
  readonly action: EntityAction.TourAction
  readonly snapshot?: StatusSnapshot | undefined
}): Event<"tour-action-created"> =>
  event("tour-action-created", {
    tour: input.tour,
    action: redactTourAction(input.action),
    ...(input.snapshot === undefined
      ? {}
      : { oldStatus: input.snapshot.oldStatus, newStatus: input.snapshot.newStatus })
  })

/** The `tour-action-created` events of one commit, in order; a snapshot goes with the first only. @since 0.1.0 */
export const tourCommitEvents = (input: {
  readonly tour: Entity.Tour
  readonly actions: ReadonlyArray<EntityAction.TourAction>
  readonly snapshot?: StatusSnapshot | undefined
}): ReadonlyArray<Event<"tour-action-created">> =>
  input.actions.map((action, index) =>
    tourActionCreated({ tour: input.tour, action, snapshot: index === 0 ? input.snapshot : undefined })
  )

/** `tour-deleted` carries only the id. @since 0.1.0 */
export const tourDeleted = (tour: { readonly id: string }): Event<"tour-deleted"> =>
  event("tour-deleted", { tourId: tour.id })

/** `shipment-deleted` carries only the id. @since 0.1.0 */
export const shipmentDeleted = (shipment: { readonly id: string }): Event<"shipment-deleted"> =>
  event("shipment-deleted", { shipmentId: shipment.id })

/** Bidding stats of a callout, as the bidding engine computes them. @since 0.1.0 */
export interface BiddingStats {
  readonly currentBid: number | null
  readonly bidCount: number
  readonly isWinning: boolean
  readonly suggestedBid: number | null
}

/** The stat fields a callout is enriched with. @since 0.1.0 */
export const biddingStatFields = ["currentBid", "bidCount", "isWinning", "suggestedBid"] as const

/** A callout as stored, before enrichment. @since 0.1.0 */
export interface Callout {
  readonly id: string
  readonly [key: string]: unknown
}

/** Enriches a callout with its bidding stats; a secret auction reveals only `suggestedBid`. @since 0.1.0 */
export const enrichCallout = (
  callout: Callout,
  stats: BiddingStats,
  options: { readonly secretAuction: boolean }
): Entity.CalloutWithStats => {
  const base = omit(callout, biddingStatFields)
  return options.secretAuction
    ? { ...base, suggestedBid: stats.suggestedBid }
    : {
        ...base,
        currentBid: stats.currentBid,
        bidCount: stats.bidCount,
        isWinning: stats.isWinning,
        suggestedBid: stats.suggestedBid
      }
}

/** A callout action as the dispatcher records it; `createdAtMilliseconds` is the truth. @since 0.1.0 */
export interface CalloutActionInput {
  readonly id: string
  readonly payload: EntityAction.CalloutAction["payload"]
  readonly createdAtMilliseconds: number
  readonly [key: string]: unknown
}

/**
 * A `callout-action-created` event: the modified callouts enriched, the action redacted with
 * `createdAt` in epoch milliseconds, the tour (if any) reduced to `id` and `properties`.
 * @since 0.1.0
 */
export const calloutActionCreated = (input: {
  readonly callouts: ReadonlyArray<{ readonly callout: Callout; readonly stats: BiddingStats }>
  readonly modifiedCalloutIds: Iterable<string>
  readonly secretAuction: boolean
  readonly action: CalloutActionInput
  readonly tour?: Entity.CalloutTour | undefined
}): Event<"callout-action-created"> => {
  const modified = new Set(input.modifiedCalloutIds)
  const millis = input.action.createdAtMilliseconds
  return event("callout-action-created", {
    callouts: input.callouts
      .filter(({ callout }) => modified.has(callout.id))
      .map(({ callout, stats }) => enrichCallout(callout, stats, { secretAuction: input.secretAuction })),
    action: redactCalloutAction({ ...input.action, createdAt: millis, createdAtMilliseconds: millis }),
    ...(input.tour === undefined ? {} : { tour: reduceCalloutTour(input.tour) })
  })
}

/** The event types of tasks. @since 0.1.0 */
export type TaskEventType = "task-created" | "task-completed" | "task-skipped" | "task-cancelled"

/** The closing event of each closed task status. @since 0.1.0 */
export const closingEventTypes = {
  completed: "task-completed",
  skipped: "task-skipped",
  cancelled: "task-cancelled"
} as const

const closingStatus = (task: Task.Task | undefined) =>
  task?.status === "completed" || task?.status === "skipped" || task?.status === "cancelled" ? task.status : undefined

/** A reference to an entity: exactly `orn`, `type` and `id`, never the entity itself. @since 0.1.0 */
export const toReference = (entity: {
  readonly orn: string
  readonly type: string
  readonly id: string
}): Task.ReferencedEntity => ({ orn: entity.orn, type: entity.type, id: entity.id })

/** Marks a task as created from a template: `templateId`, and `templateKey` if the template has one. @since 0.1.0 */
export const applyTemplate = (
  task: Task.Task,
  template: { readonly id: string; readonly key?: string | null | undefined }
): Task.Task => ({
  ...omit(task, ["templateKey"]),
  templateId: template.id,
  ...(template.key === undefined || template.key === null || template.key === "" ? {} : { templateKey: template.key })
})

/** A task change the rules refuse: a closed task (completed, skipped, cancelled) stays closed. @since 0.1.0 */
export class TaskTransitionError extends Schema.TaggedError<TaskTransitionError>("@waybill/events/TaskTransitionError")(
  "TaskTransitionError",
  { taskId: Schema.String, message: Schema.String }
) {}

/**
 * The task events one change raises: `task-created` when the task comes to exist, one closing
 * event when it closes, nothing for edits. A closed task never changes status again (refused).
 * @since 0.1.0
 */
export const taskEvents = (input: {
  readonly previous: Task.Task | undefined
  readonly next: Task.Task
  readonly referencedEntity: { readonly orn: string; readonly type: string; readonly id: string }
}): Either.Either<ReadonlyArray<Event<TaskEventType>>, TaskTransitionError> => {
  const wasClosed = closingStatus(input.previous)
  const closed = closingStatus(input.next)
  if (wasClosed !== undefined && closed !== wasClosed) {
    return Either.left(
      new TaskTransitionError({
        taskId: input.next.id,
        message: `The task is ${wasClosed} and stays closed (requested ${input.next.status ?? "open"})`
      })
    )
  }
  const referencedEntity = toReference(input.referencedEntity)
  const events: Array<Event<TaskEventType>> = []
  if (input.previous === undefined) events.push(event("task-created", { task: input.next, referencedEntity }))
  if (closed !== undefined && wasClosed === undefined) {
    if (closed === "completed") {
      const outcome = input.next.outcome ?? {}
      events.push(
        event("task-completed", {
          task: { ...input.next, outcome: { ...outcome, formOutput: outcome.formOutput ?? {} } },
          referencedEntity
        })
      )
    } else {
      events.push(event(closingEventTypes[closed], { task: input.next, referencedEntity }))
    }
  }
  return Either.right(events)
}

/** A load transition the rules refuse (e.g. disposing a Lost load). @since 0.1.0 */
export class LoadTransitionError extends Schema.TaggedError<LoadTransitionError>("@waybill/events/LoadTransitionError")(
  "LoadTransitionError",
  { loadId: Schema.String, message: Schema.String }
) {}

const isEnded = (load: Entity.LegLoad) => load.status === "Returned" || load.status === "Perished"

const ended = (load: Entity.LegLoad) =>
  Either.left(new LoadTransitionError({ loadId: load.id, message: `The load already ended as ${load.status}` }))

/**
 * The one event of every leg lifecycle transition: the full leg after it, the verb in
 * `action.payload.type`.
 * @since 0.1.0
 */
export const legActionCreated = (leg: Entity.Leg, action: EntityAction.LegAction): Event<"leg-action-created"> =>
  event("leg-action-created", { leg, action })

/** `leg-deleted` carries the full removed leg (unlike tour and shipment deletions). @since 0.1.0 */
export const legDeleted = (leg: Entity.Leg): Event<"leg-deleted"> => event("leg-deleted", { leg })

/** Ends a load as Returned (goods intact, obligation moved to a return shipment). @since 0.1.0 */
export const returnLoad = (
  load: Entity.LegLoad,
  options: { readonly returnShipmentId?: string | undefined } = {}
): Either.Either<Entity.LegLoad, LoadTransitionError> =>
  isEnded(load)
    ? ended(load)
    : Either.right({
        ...omit(load, ["writeOff"]),
        status: "Returned",
        ...(options.returnShipmentId === undefined ? {} : { returnShipmentId: options.returnShipmentId })
      })

/** Ends a load as Perished, written off as Lost or Damaged: a terminal loss, no follow-up shipment. @since 0.1.0 */
export const writeOffLoad = (
  load: Entity.LegLoad,
  writeOff: {
    readonly reason: "Lost" | "Damaged"
    readonly writtenOffBy: string
    readonly note?: string | undefined
    readonly writtenOffAt?: number | undefined
  }
): Either.Either<Entity.LegLoad, LoadTransitionError> =>
  isEnded(load)
    ? ended(load)
    : Either.right({
        ...load,
        status: "Perished",
        writeOff: {
          reason: writeOff.reason,
          writtenOffBy: writeOff.writtenOffBy,
          ...(writeOff.note === undefined ? {} : { note: writeOff.note }),
          ...(writeOff.writtenOffAt === undefined ? {} : { writtenOffAt: writeOff.writtenOffAt })
        }
      })

/** Records the disposal of a written-off Damaged load; fails on any other load or a second time. @since 0.1.0 */
export const disposeLoad = (
  load: Entity.LegLoad,
  disposal: { readonly disposedAt: number; readonly disposedBy: string }
): Either.Either<Entity.LegLoad, LoadTransitionError> => {
  const writeOff = load.writeOff
  if (load.status !== "Perished" || writeOff === undefined) {
    return Either.left(new LoadTransitionError({ loadId: load.id, message: "Only a written-off load can be disposed" }))
  }
  if (writeOff.reason !== "Damaged") {
    return Either.left(new LoadTransitionError({ loadId: load.id, message: "A Lost load is never disposed" }))
  }
  if (writeOff.disposedAt !== undefined) {
    return Either.left(new LoadTransitionError({ loadId: load.id, message: "The load is already disposed" }))
  }
  return Either.right({
    ...load,
    writeOff: { ...writeOff, disposedAt: disposal.disposedAt, disposedBy: disposal.disposedBy }
  })
}
