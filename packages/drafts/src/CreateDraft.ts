/**
 * The body of `POST /drafts` and the pure creation rules (contract §2, spec "Transport draft").
 *
 * @since 0.1.0
 */
import * as Issue from "@waybill/core/Issue"
import * as Schedule from "@waybill/recurring/Schedule"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type Draft, DraftStatus, JsonObject, Origin } from "./Draft.js"
import * as rules from "./internal/rules.js"
import type { TransportShape } from "./ReferenceData.js"

// An optional key whose value may be null, refused with one message rather than one per union member.
const optionalNullable = <A, I>(schema: Schema.Schema<A, I>, message: string) =>
  Schema.optionalWith(Schema.NullOr(schema).annotations({ message: () => ({ message, override: true }) }), {
    exact: true
  })

/**
 * The request body of `POST /drafts`. The structure is checked here; the rules (status for the
 * origin, recurring statuses refused, template copy, recurring-master rules…) are checked by
 * `validateCreate`, which reports them all together. `recurringSchedule` is taken as any value
 * so that its problems are reported with the other rules; `null` means "no schedule". For the
 * fields a template provides (`name`, `transport`, `transportShapeId`, `recurringSchedule`) an
 * explicit `null` replaces the template's value; elsewhere `null` counts as omitted.
 *
 * @since 0.1.0
 * @category models
 */
export const CreateDraft = Schema.Struct({
  origin: Origin.annotations({
    message: () => ({ message: 'must be "decode", "hub" or "manual"', override: true })
  }),
  status: DraftStatus.annotations({
    message: () => ({ message: 'must be "draft", "review-order" or "review-rfq"', override: true })
  }),
  isValid: optionalNullable(Schema.Boolean, "must be a boolean or null"),
  name: optionalNullable(Schema.String, "must be a string or null"),
  transport: optionalNullable(JsonObject, "must be a JSON object or null"),
  transportShapeId: optionalNullable(Schema.String, "must be a string"),
  inboxId: optionalNullable(Schema.String, "must be a string or null"),
  payload: optionalNullable(JsonObject, "must be a JSON object or null"),
  templateDraftId: optionalNullable(Schema.String, "must be a string or null"),
  recurringSchedule: Schema.optionalWith(
    Schema.Unknown.annotations({
      identifier: "RecurringScheduleInput",
      description: "A RecurringSchedule (contract §2); when set, the draft becomes a recurring master"
    }),
    { exact: true }
  )
}).annotations({ identifier: "CreateDraft" })

/**
 * @since 0.1.0
 * @category models
 */
export type CreateDraft = typeof CreateDraft.Type

/**
 * What creation needs besides the request, resolved by the caller: the new draft's id, the
 * time, the transport shapes, and the template draft when `templateDraftId` is set
 * (`Option.none()` when no draft of the caller's workspace has that id).
 *
 * @since 0.1.0
 * @category models
 */
export interface CreateContext {
  readonly id: string
  /** Epoch milliseconds (`Clock.currentTimeMillis`). */
  readonly now: number
  readonly transportShape: (id: string) => Option.Option<TransportShape>
  readonly template: Option.Option<Draft>
}

type Copied = "name" | "transport" | "transportShapeId" | "recurringSchedule"

// The request's value when the key is present (even `null`), else the template's.
const inherit = <K extends Copied>(
  request: CreateDraft,
  template: Option.Option<Draft>,
  key: K
): CreateDraft[K] | Draft[K] | undefined =>
  request[key] !== undefined ? request[key] : Option.isSome(template) ? template.value[key] : undefined

/**
 * Validates a create request and builds the draft, or returns every violated rule with its
 * dotted path: status for the origin (recurring statuses refused), `payload` / `inboxId` on
 * decode drafts only, an existing template, a known transport shape, `{{ weekday }}` /
 * `{{ date }}` as the only name placeholders, and, for a recurring master, the seven rules of
 * contract §2 (schedule checked by `@waybill/recurring`). The transport is otherwise stored as
 * given.
 *
 * @since 0.1.0
 * @category validation
 */
export const validateCreate = (
  request: CreateDraft,
  context: CreateContext
): Either.Either<Draft, ReadonlyArray<Issue.Issue>> => {
  const issues: Array<Issue.Issue> = []
  const templateDraftId = request.templateDraftId ?? null
  const template = templateDraftId === null ? Option.none() : context.template
  if (templateDraftId !== null && Option.isNone(template)) {
    issues.push(Issue.make("templateDraftId", "no draft with this id exists"))
  }
  const name = inherit(request, template, "name") ?? null
  const transport = inherit(request, template, "transport") ?? null
  const transportShapeId = inherit(request, template, "transportShapeId") ?? null
  const schedule = inherit(request, template, "recurringSchedule") ?? null
  const isMaster = schedule !== null

  issues.push(...rules.originStatusIssues(request.origin, request.status, isMaster))
  issues.push(...rules.decodeOnlyIssues(request.origin, request))

  const shape = transportShapeId === null ? Option.none() : context.transportShape(transportShapeId)
  const templateMissing = templateDraftId !== null && Option.isNone(template)
  if (transportShapeId === null) {
    // With the template missing, its shape might have been meant: the template issue says it all.
    if (!templateMissing || request.transportShapeId === null) {
      issues.push(Issue.make("transportShapeId", "is required (directly or from the template draft)"))
    }
  } else if (Option.isNone(shape)) {
    issues.push(Issue.make("transportShapeId", "no transport shape with this id exists"))
  }
  issues.push(...rules.placeholderIssues(name))

  let recurringSchedule: Schedule.RecurringSchedule | null = null
  if (isMaster) {
    if (Option.isSome(shape)) issues.push(...rules.recurringShapeIssues(shape.value))
    issues.push(...rules.masterTransportIssues(transport))
    const validated = Schedule.validateSchedule(schedule, Math.floor(context.now / 1000), { phase: "create" })
    if (Either.isLeft(validated)) issues.push(...Issue.prefix(validated.left, "recurringSchedule"))
    else recurringSchedule = validated.right
  }
  if (issues.length > 0) return Either.left(rules.dedupe(issues))

  const seconds = Math.floor(context.now / 1000)
  return Either.right({
    id: context.id,
    origin: request.origin,
    status: request.status,
    isValid: request.isValid ?? null,
    name,
    transport,
    transportShapeId: transportShapeId!,
    inboxId: request.inboxId ?? null,
    payload: request.payload ?? null,
    templateDraftId,
    recurringSchedule,
    createdAt: seconds,
    updatedAt: seconds
  })
}
