/** The draft rules shared by creation and activation, each returning every issue it finds. */
import * as Issue from "@waybill/core/Issue"
import * as NameTemplate from "@waybill/recurring/NameTemplate"
import * as Arr from "effect/Array"
import * as Option from "effect/Option"
import { type DraftStatus, type Origin, recurringStatuses } from "../Draft.js"
import type { TransportShape } from "../ReferenceData.js"
import { isObject, own } from "./json.js"

/** Every `{{ … }}` placeholder other than `{{ weekday }}` and `{{ date }}`, as the renderer sees them. */
export const placeholderIssues = (name: string | null): Array<Issue.Issue> =>
  name === null ? [] : Issue.prefix(NameTemplate.validate(name), "name")

/** Origin and status at creation; either may be `undefined` (malformed), the other still counts. */
export const originStatusIssues = (
  origin: Origin | undefined,
  status: DraftStatus | undefined,
  isMaster: boolean
): Array<Issue.Issue> => {
  const issues: Array<Issue.Issue> = []
  if (status !== undefined && recurringStatuses.includes(status)) {
    issues.push(
      Issue.make("status", `cannot be ${status} at creation: create the draft with status draft and activate it`)
    )
  } else if (origin === "decode" && status === "draft") {
    issues.push(Issue.make("status", "must be review-order or review-rfq for a decode draft"))
  } else if (origin !== undefined && origin !== "decode" && status !== undefined && status !== "draft") {
    issues.push(Issue.make("status", `must be draft for a ${origin} draft`))
  } else if (isMaster && status !== undefined && status !== "draft") {
    issues.push(Issue.make("status", "must be draft for a recurring master"))
  }
  if (isMaster && origin === "decode") {
    issues.push(Issue.make("origin", "must be manual or hub for a recurring master"))
  }
  return issues
}

/** `payload` and `inboxId` belong to decode drafts only. */
export const decodeOnlyIssues = (
  origin: Origin,
  fields: { readonly payload?: unknown; readonly inboxId?: unknown }
): Array<Issue.Issue> =>
  origin === "decode"
    ? []
    : [
        ...(fields.payload === null || fields.payload === undefined
          ? []
          : [Issue.make("payload", `is only allowed on decode drafts, not on ${origin} drafts`)]),
        ...(fields.inboxId === null || fields.inboxId === undefined
          ? []
          : [Issue.make("inboxId", `is only allowed on decode drafts, not on ${origin} drafts`)])
      ]

/** Rule 2 of a recurring master: the shape allows recurring mode and outputs tours. */
export const recurringShapeIssues = (shape: TransportShape): Array<Issue.Issue> => [
  ...(shape.recurring.enabled
    ? []
    : [Issue.make("transportShapeId", `transport shape ${shape.id} does not have recurring mode enabled`)]),
  ...(shape.outputs.includes("tour")
    ? []
    : [Issue.make("transportShapeId", `transport shape ${shape.id} does not output tours`)])
]

const TIME = /^([01]\d|2[0-3]):[0-5]\d$/

/** The longest multi-day tour a stop may describe, in days after the trigger day. */
export const MAX_DAY_OFFSET = 365

const stopIssues = (stop: unknown, path: string): Array<Issue.Issue> => {
  if (!isObject(stop)) return [Issue.make(path, "must be an object with an address and a timeWindow")]
  const issues: Array<Issue.Issue> = []
  const address = own(stop, "address")
  if (!isObject(address) || Object.keys(address).length === 0) {
    issues.push(Issue.make(`${path}.address`, "must be a non-empty address object"))
  }
  const window = own(stop, "timeWindow")
  if (!isObject(window)) {
    issues.push(Issue.make(`${path}.timeWindow`, 'must be an object { "from": "HH:MM", "to": "HH:MM" }'))
  } else {
    const from = own(window, "from")
    const to = own(window, "to")
    const fromOk = typeof from === "string" && TIME.test(from)
    const toOk = typeof to === "string" && TIME.test(to)
    if (!fromOk) issues.push(Issue.make(`${path}.timeWindow.from`, "must be a 24-hour time HH:MM"))
    if (!toOk) issues.push(Issue.make(`${path}.timeWindow.to`, "must be a 24-hour time HH:MM"))
    if (fromOk && toOk && from >= to) issues.push(Issue.make(`${path}.timeWindow`, "from must be before to"))
  }
  if (Object.hasOwn(stop, "dayOffset")) {
    const dayOffset = stop.dayOffset
    if (typeof dayOffset !== "number" || !Number.isInteger(dayOffset) || dayOffset < 0) {
      issues.push(Issue.make(`${path}.dayOffset`, "must be a non-negative integer"))
    } else if (dayOffset > MAX_DAY_OFFSET) {
      issues.push(Issue.make(`${path}.dayOffset`, `must be at most ${MAX_DAY_OFFSET}`))
    }
  }
  return issues
}

/** Rules 3–6 of a recurring master: stops, their address, window and day offset, vehicle class. */
export const masterTransportIssues = (transport: unknown): Array<Issue.Issue> => {
  const issues: Array<Issue.Issue> = []
  const stops = own(own(transport, "multiStopData"), "stops")
  const stopsPath = "transport.multiStopData.stops"
  if (!Array.isArray(stops)) {
    issues.push(Issue.make(stopsPath, "must be an array of at least 2 stops for a recurring master"))
  } else {
    if (stops.length < 2) {
      issues.push(Issue.make(stopsPath, `must hold at least 2 stops for a recurring master, found ${stops.length}`))
    }
    stops.forEach((stop, index) => {
      issues.push(...stopIssues(stop, `${stopsPath}.${index}`))
    })
  }
  const vehicleClass = own(own(transport, "tour"), "vehicleClass")
  if (typeof vehicleClass !== "string" || vehicleClass.trim() === "") {
    issues.push(Issue.make("transport.tour.vehicleClass", "must be a vehicle class id for a recurring master"))
  }
  return issues
}

/** The vehicle class id of a master's transport, if it has one. */
export const vehicleClassOf = (transport: unknown): Option.Option<string> => {
  const vehicleClass = own(own(transport, "tour"), "vehicleClass")
  return typeof vehicleClass === "string" && vehicleClass.trim() !== "" ? Option.some(vehicleClass) : Option.none()
}

/** Drops repeated issues (same path and message), keeping the first. */
export const dedupe = (issues: ReadonlyArray<Issue.Issue>): Array<Issue.Issue> =>
  Arr.dedupeWith(issues, (a, b) => a.path === b.path && a.message === b.message)
