/**
 * Draft rules without a server: `validateCreate` builds a draft or lists every violated rule,
 * `transition` applies an action. Both are pure; you store the results and publish the events.
 *
 *   npx tsx examples/embed/src/domain/drafts.ts
 */
import { CreateDraft, validateCreate } from "@waybill/drafts/CreateDraft"
import { lookup, type TransportShape, type VehicleClass } from "@waybill/drafts/ReferenceData"
import { transition } from "@waybill/drafts/Transition"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const shapes: ReadonlyArray<TransportShape> = [
  { id: "shape_line", name: "Line haul", outputs: ["tour"], recurring: { enabled: true }, requiredFields: [] }
]
const vehicleClasses: ReadonlyArray<VehicleClass> = [{ id: "vc_12t", name: "12 t rigid", maxWeightKg: 5000, rank: 1 }]
const now = Date.parse("2027-01-04T09:00:00Z") // epoch milliseconds, from your clock

const request = Schema.decodeUnknownSync(CreateDraft)({
  origin: "manual",
  status: "draft",
  name: "Line {{ weekday }}",
  transportShapeId: "shape_line",
  transport: {
    multiStopData: {
      stops: [
        { address: { city: "Hamburg" }, timeWindow: { from: "06:00", to: "08:00" } },
        { address: { city: "Berlin" }, timeWindow: { from: "13:00", to: "15:00" }, dayOffset: 1 }
      ]
    },
    tour: { vehicleClass: "vc_12t" }
  },
  recurringSchedule: { cronExpressions: ["0 6 * * 1-5"], timezone: "Europe/Berlin", leadTimeDays: 7 }
})
const context = { id: "drf_example", now, transportShape: lookup(shapes), template: Option.none() }

// A valid master: Right(draft).
export const draft = Either.getOrThrow(validateCreate(request, context))

// One stop and no vehicle class: Left(every issue, each with its dotted path).
export const issues = Either.flip(
  validateCreate({ ...request, transport: { multiStopData: { stops: [{ address: { city: "Hamburg" } }] } } }, context)
).pipe(Either.getOrThrow)

// Activation runs the cross-entity checks and yields the new draft, the action record and the
// events to publish (transport-draft-recurring-activated, transport-draft-action-created).
export const activated = Either.getOrThrow(
  transition(draft, { type: "activate-recurring" }, now, {
    actionId: "act_example",
    actor: { type: "api-key", id: "key_example" },
    transportShape: lookup(shapes),
    vehicleClass: lookup(vehicleClasses)
  })
)

console.log(
  draft.status,
  "->",
  activated.draft.status,
  activated.events.map((event) => event.type)
)
console.log(issues.map((issue) => `${issue.path}: ${issue.message}`))
