/** The body of `POST /drafts` and the pure creation rules. @since 0.1.0 */
import * as Issue from "@waybill/core/Issue"
import * as JsonInput from "@waybill/core/JsonInput"
import * as Schedule from "@waybill/recurring/Schedule"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { type Draft, DraftStatus, JsonObject, Origin } from "./Draft.js"
import { isObject, own } from "./internal/json.js"
import * as rules from "./internal/rules.js"
import type { TransportShape } from "./ReferenceData.js"

// One message for a bad value rather than one per union member.
const optionalNullable = <A, I>(schema: Schema.Schema<A, I>, message: string) =>
  Schema.optionalWith(Schema.NullOr(schema).annotations({ message: () => ({ message, override: true }) }), {
    exact: true
  })

/**
 * The request body of `POST /drafts` as OpenAPI describes it (`validateCreate` checks a body).
 * On the fields a template provides, `null` replaces the template's value; elsewhere it counts
 * as omitted.
 * @since 0.1.0
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

/** @since 0.1.0 */
export type CreateDraft = typeof CreateDraft.Type

/**
 * What creation needs besides the request, resolved by the caller; `template` is none when no
 * draft of the caller's workspace has the requested id.
 * @since 0.1.0
 */
export interface CreateContext {
  readonly id: string
  /** Epoch milliseconds (`Clock.currentTimeMillis`). */
  readonly now: number
  readonly transportShape: (id: string) => Option.Option<TransportShape>
  readonly template: Option.Option<Draft>
}

type Copied = "name" | "transport" | "transportShapeId" | "recurringSchedule"

type Field = keyof CreateDraft

// One decoder per field, so a malformed field does not hide the others.
const fieldDecoders = Object.fromEntries(
  Object.entries(CreateDraft.fields).map(([key, field]) => [
    key,
    Schema.decodeUnknownEither(Schema.Struct({ [key]: field }), { errors: "all" })
  ])
) as Record<Field, (input: unknown) => Either.Either<Partial<CreateDraft>, ParseResult.ParseError>>

// A `malformed` field was sent but is unusable: rules that need it are skipped, and a template's
// value does not stand in for it.
interface Decoded {
  readonly request: Partial<CreateDraft>
  readonly malformed: ReadonlySet<Field>
  readonly issues: ReadonlyArray<Issue.Issue>
}

const decodeWhole = Schema.decodeUnknownEither(CreateDraft)
const noFields: ReadonlySet<Field> = new Set()

const decodeFields = (input: Record<string, unknown>): Decoded => {
  const whole = decodeWhole(input)
  if (Either.isRight(whole)) return { request: whole.right, malformed: noFields, issues: [] }
  const request: Record<string, unknown> = {}
  const malformed = new Set<Field>()
  const issues: Array<Issue.Issue> = []
  for (const key of Object.keys(fieldDecoders) as Array<Field>) {
    const given = Object.hasOwn(input, key)
    const decoded = fieldDecoders[key](given ? { [key]: input[key] } : {})
    if (Either.isRight(decoded)) {
      if (given) request[key] = decoded.right[key]
    } else if (given) {
      issues.push(...Issue.fromParseError(decoded.left))
      malformed.add(key)
    } else {
      issues.push(Issue.make(key, "is required"))
    }
  }
  return { request: request as Partial<CreateDraft>, malformed, issues }
}

/** The template draft id a create request names, for the caller to build `CreateContext.template`. @since 0.1.0 */
export const requestedTemplateId = (input: unknown): Option.Option<string> => {
  const value = isObject(input) ? own(input, "templateDraftId") : undefined
  return typeof value === "string" ? Option.some(value) : Option.none()
}

// The request's value when present (even `null`), else the template's; `undefined` if malformed.
const inherit = <K extends Copied>(
  decoded: Decoded,
  template: Option.Option<Draft>,
  key: K
): CreateDraft[K] | Draft[K] | undefined => {
  if (decoded.malformed.has(key)) return undefined
  const value = decoded.request[key]
  return value !== undefined ? value : Option.isSome(template) ? template.value[key] : undefined
}

/**
 * Validates a create request as received (any JSON value) and builds the draft, or returns every
 * problem at once with its dotted path, each rule run on whatever parts are usable
 * (docs/products.md, Decisions, Create).
 * @since 0.1.0
 */
export const validateCreate = (
  input: unknown,
  context: CreateContext
): Either.Either<Draft, ReadonlyArray<Issue.Issue>> => {
  if (!isObject(input)) return Either.left([Issue.make("", "must be a JSON object")])
  // Nesting, reserved keys, non-finite numbers and text PostgreSQL cannot store fail here, at
  // their paths, not in the write (or silently in it, as `null`).
  const checked = JsonInput.inspect(input)
  if (checked.tooDeep !== undefined) return Either.left([checked.tooDeep])

  const decoded = decodeFields(input)
  const { malformed, request } = decoded
  const issues: Array<Issue.Issue> = [...decoded.issues, ...checked.issues]
  const templateDraftId = request.templateDraftId ?? null
  const template = templateDraftId === null ? Option.none() : context.template
  const templateMissing = templateDraftId !== null && Option.isNone(template)
  if (templateMissing) issues.push(Issue.make("templateDraftId", "no draft with this id exists"))
  const name = inherit(decoded, template, "name") ?? null
  const transport = inherit(decoded, template, "transport") ?? null
  const transportShapeId = inherit(decoded, template, "transportShapeId") ?? null
  const schedule = inherit(decoded, template, "recurringSchedule") ?? null
  const isMaster = schedule !== null

  issues.push(...rules.originStatusIssues(request.origin, request.status, isMaster))
  if (request.origin !== undefined) {
    issues.push(
      ...rules.decodeOnlyIssues(request.origin, { payload: own(input, "payload"), inboxId: own(input, "inboxId") })
    )
  }

  const shape = transportShapeId === null ? Option.none() : context.transportShape(transportShapeId)
  if (malformed.has("transportShapeId")) {
    // Its own issue says what is wrong with it.
  } else if (transportShapeId === null) {
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
    if (!malformed.has("transport")) issues.push(...rules.masterTransportIssues(transport))
    const validated = Schedule.validateSchedule(schedule, Math.floor(context.now / 1000), { phase: "create" })
    if (Either.isLeft(validated)) issues.push(...Issue.prefix(validated.left, "recurringSchedule"))
    else recurringSchedule = validated.right
  }
  if (issues.length > 0 || request.origin === undefined || request.status === undefined) {
    return Either.left(rules.dedupe(issues))
  }

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
