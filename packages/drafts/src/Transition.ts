/**
 * The draft status machine of contract §2 as a total, pure function, with the cross-entity
 * validation that activation runs.
 * @since 0.1.0
 */
import * as Issue from "@waybill/core/Issue"
import * as ValidationError from "@waybill/core/ValidationError"
import type { NewEvent } from "@waybill/events/EventOutbox"
import * as Schedule from "@waybill/recurring/Schedule"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { ActionRequest, ActionType, Actor, Draft, DraftStatus, TransportDraftAction } from "./Draft.js"
import { InvalidTransition } from "./DraftError.js"
import * as DraftEvents from "./DraftEvents.js"
import { atPath, isPresent } from "./internal/json.js"
import * as rules from "./internal/rules.js"
import type { TransportShape, VehicleClass } from "./ReferenceData.js"

/** One row of the table: the statuses an action leaves from and the status it leads to. @since 0.1.0 */
export interface Move {
  readonly from: ReadonlyArray<DraftStatus>
  readonly to: DraftStatus
}

/**
 * The transitions of contract §2, for recurring masters only. Every other combination is an
 * invalid transition; `ended-recurring` is terminal.
 * @since 0.1.0
 */
export const moves: Readonly<Record<ActionType, Move>> = {
  "activate-recurring": { from: ["draft"], to: "active-recurring" },
  "pause-recurring": { from: ["active-recurring"], to: "paused-recurring" },
  "resume-recurring": { from: ["paused-recurring"], to: "active-recurring" },
  "end-recurring": { from: ["active-recurring", "paused-recurring"], to: "ended-recurring" }
}

/**
 * What a transition needs besides the draft: the id and actor of the action record, and the
 * reference data activation checks against.
 * @since 0.1.0
 */
export interface TransitionContext {
  readonly actionId: string
  readonly actor: Actor
  readonly transportShape: (id: string) => Option.Option<TransportShape>
  readonly vehicleClass: (id: string) => Option.Option<VehicleClass>
}

/**
 * A transition that happened: the draft after it, the action record, and the events to publish
 * (`transport-draft-recurring-*` and `transport-draft-action-created`).
 * @since 0.1.0
 */
export interface Transitioned {
  readonly draft: Draft
  readonly action: TransportDraftAction
  readonly events: ReadonlyArray<NewEvent>
}

/**
 * The cross-entity validation of activation (contract §2): the create rules but "startsAt not in
 * the past", the shape still recurring with `tour` output and its `requiredFields` present, the
 * vehicle class existing, `endsAt` ahead and a trigger in the window from now. `now` is epoch ms.
 * @since 0.1.0
 */
export const activationIssues = (
  draft: Draft,
  now: number,
  context: Pick<TransitionContext, "transportShape" | "vehicleClass">
): ReadonlyArray<Issue.Issue> => {
  const issues: Array<Issue.Issue> = []
  issues.push(...rules.originStatusIssues(draft.origin, "draft", true))
  issues.push(...rules.decodeOnlyIssues(draft.origin, draft))
  issues.push(...rules.placeholderIssues(draft.name))
  const shape = context.transportShape(draft.transportShapeId)
  if (Option.isNone(shape)) {
    issues.push(Issue.make("transportShapeId", `transport shape ${draft.transportShapeId} no longer exists`))
  } else {
    issues.push(...rules.recurringShapeIssues(shape.value))
  }
  issues.push(...rules.masterTransportIssues(draft.transport))
  if (Option.isSome(shape)) {
    // A path a master rule already reported (transport.tour.vehicleClass) is not reported twice.
    const reported = new Set(issues.map((issue) => issue.path))
    for (const path of shape.value.requiredFields) {
      if (!reported.has(path) && !isPresent(atPath(draft, path))) {
        issues.push(Issue.make(path, `is required by transport shape ${shape.value.id}`))
      }
    }
  }
  const vehicleClass = rules.vehicleClassOf(draft.transport)
  if (Option.isSome(vehicleClass) && Option.isNone(context.vehicleClass(vehicleClass.value))) {
    issues.push(Issue.make("transport.tour.vehicleClass", `no vehicle class with id ${vehicleClass.value} exists`))
  }
  const schedule = Schedule.validateSchedule(draft.recurringSchedule, Math.floor(now / 1000), { phase: "activation" })
  if (Either.isLeft(schedule)) issues.push(...Issue.prefix(schedule.left, "recurringSchedule"))
  return rules.dedupe(issues)
}

const refuse = (draft: Draft, type: ActionType, message: string): InvalidTransition =>
  new InvalidTransition({ draftId: draft.id, status: draft.status, action: type, message })

/**
 * Applies an action to a draft: the new draft (status and `updatedAt`), the action record and its
 * events, or `InvalidTransition` (not a master, or not allowed from its status; a `system` actor
 * only ends a master past `endsAt`) or activation's `ValidationError`. Pure; `now` is epoch ms.
 * @since 0.1.0
 */
export const transition = (
  draft: Draft,
  action: ActionRequest,
  now: number,
  context: TransitionContext
): Either.Either<Transitioned, InvalidTransition | ValidationError.ValidationError> => {
  const move = moves[action.type]
  if (draft.recurringSchedule === null) {
    return Either.left(refuse(draft, action.type, `Draft ${draft.id} is not a recurring master.`))
  }
  if (!move.from.includes(draft.status)) {
    return Either.left(
      refuse(
        draft,
        action.type,
        draft.status === "ended-recurring"
          ? `Draft ${draft.id} has ended; ended-recurring is final.`
          : `${action.type} is not allowed in status ${draft.status} (only from ${move.from.join(" or ")}).`
      )
    )
  }
  if (context.actor.type === "system") {
    const endsAt = draft.recurringSchedule.endsAt
    if (action.type !== "end-recurring" || endsAt === undefined || now < endsAt * 1000) {
      return Either.left(
        refuse(draft, action.type, "The system only ends a recurring master once its endsAt has passed.")
      )
    }
  }
  if (action.type === "activate-recurring") {
    const issues = activationIssues(draft, now, context)
    if (issues.length > 0) {
      return Either.left(
        new ValidationError.ValidationError({
          message:
            issues.length === 1
              ? `The draft cannot be activated: ${issues[0]!.path}: ${issues[0]!.message}`
              : `The draft cannot be activated: ${issues.length} problems found`,
          issues
        })
      )
    }
  }
  const seconds = Math.floor(now / 1000)
  const next: Draft = { ...draft, status: move.to, updatedAt: seconds }
  const record: TransportDraftAction = {
    id: context.actionId,
    draftId: draft.id,
    payload: action.reason === undefined ? { type: action.type } : { type: action.type, reason: action.reason },
    actor: context.actor,
    createdAt: seconds,
    createdAtMilliseconds: Math.floor(now)
  }
  return Either.right({ draft: next, action: record, events: DraftEvents.acted(next, record) })
}
