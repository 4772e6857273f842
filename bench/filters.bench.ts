/**
 * Filter evaluation throughput: one realistic filter of 6 conditions over 3 levels
 * (text begins_with and equals, numbers, a checkbox, any/all nesting) evaluated over 200k varied
 * tour payloads (parsed from JSON, as the dispatcher stores them), against
 * - a hand-written JS predicate of the same logic (the physical limit),
 * - the same, written with `Object.hasOwn` for the contract's own-property rule (context),
 * - our closure engine (the fallback where `new Function` is not allowed; context),
 * - the peers sift and mingo (MongoDB queries) and json-logic-js, on the equivalent query.
 *
 * Targets: compiled ≥ 0.5 × hand-written and ≥ 8 × the fastest peer, in the same run.
 *
 * The machine is shared and its load swings within seconds, so contenders are measured in many
 * short slices, taking turns; a rate is the median of a contender's slices, and each target is
 * the median of the per-round ratios (contenders measured back to back).
 */
import { Filter } from "@waybill/filters"
import jsonLogic from "json-logic-js"
import { Query } from "mingo"
import siftModule from "sift"
import { type Measurement, measure, median, report, target } from "./harness.js"

const PAYLOADS = 200_000
const ROUNDS = 15
const SECONDS = 0.2

// A deterministic generator (mulberry32), so every run evaluates the same payloads.
let state = 0x5eed
const random = () => {
  state = (state + 0x6d2b79f5) | 0
  let t = Math.imul(state ^ (state >>> 15), 1 | state)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
}
const pick = <A>(values: ReadonlyArray<A>): A => values[Math.floor(random() * values.length)]!

const cities = ["Berlin", "Hamburg", "München", "Köln", "Leipzig", "Dresden", "Bremen", "Essen"]
const statuses = ["planned", "assigned", "started", "waiting-for-review", "completed", "cancelled"]

const tour = (i: number) => {
  const properties: Record<string, unknown> = {}
  // Custom properties vary per workspace and tour: some absent, some null, in varying order.
  if (random() < 0.85) properties.prop_weight = Math.round(random() * 2400)
  if (random() < 0.3) properties.prop_note = `handle with care ${i}`
  if (random() < 0.75) properties.prop_express = random() < 0.5
  if (random() < 0.7) properties.prop_priority = Math.floor(random() * 5)
  if (random() < 0.6) properties.prop_region = pick(["opt_north", "opt_south", "opt_east", "opt_west"])
  if (random() < 0.1) properties.prop_weight = null
  const from = pick(cities)
  return {
    id: `tour_${i.toString(36).padStart(26, "0")}`,
    status: pick(statuses),
    substatus: random() < 0.2 ? "delayed" : null,
    name: `${random() < 0.6 ? "Line" : "Tour"} ${from} – ${pick(cities)} ${i % 97}`,
    draftId: random() < 0.5 ? `drf_${i}` : null,
    triggerAt: 1_798_000_000 + i * 60,
    timezone: "Europe/Berlin",
    ...(random() < 0.9 ? { vehicleClass: pick(["vc_7t5", "vc_12t", "vc_40t"]) } : {}),
    stops: [
      {
        address: { city: from, country: "DEU" },
        dayOffset: 0,
        window: { startsAt: 1_798_003_600, endsAt: 1_798_010_800 }
      },
      {
        address: { city: pick(cities), country: "DEU" },
        dayOffset: 0,
        window: { startsAt: 1_798_020_000, endsAt: 1_798_027_200 }
      }
    ],
    properties,
    createdAt: 1_798_000_000 + i
  }
}
const payloads: ReadonlyArray<unknown> = Array.from({ length: PAYLOADS }, (_, i) =>
  JSON.parse(JSON.stringify({ tour: tour(i) }))
)

const filter: Filter.FilterGroup = {
  match: "all",
  conditions: [
    { field: "tour.name", operator: "begins_with", value: "Line " },
    { field: "tour.status", operator: "not_equals", value: "cancelled" },
    {
      match: "any",
      conditions: [
        { field: "tour.properties.prop_weight", operator: "gt", value: 1000 },
        {
          match: "all",
          conditions: [
            { field: "tour.properties.prop_express", operator: "is_checked" },
            { field: "tour.vehicleClass", operator: "equals", value: "vc_12t" },
            { field: "tour.properties.prop_priority", operator: "lte", value: 2 }
          ]
        }
      ]
    }
  ]
}

const compiled = Filter.compileFilter(filter)
const closures = Filter.compileFilter(filter, { engine: "closures" })

interface Tour {
  readonly name?: unknown
  readonly status?: unknown
  readonly vehicleClass?: unknown
  readonly properties?: { readonly [key: string]: unknown }
}

// The same logic by hand, as tight as it gets for JSON payloads (plain property reads).
const handWritten = (payload: unknown): boolean => {
  const tour = (payload as { readonly tour?: Tour }).tour
  if (typeof tour !== "object" || tour === null) return false
  const name = tour.name
  if (typeof name !== "string" || !name.startsWith("Line ")) return false
  if (tour.status === "cancelled") return false
  const properties = tour.properties
  if (typeof properties !== "object" || properties === null) return false
  const weight = properties.prop_weight
  if (typeof weight === "number" && weight > 1000) return true
  const priority = properties.prop_priority
  return (
    properties.prop_express === true && tour.vehicleClass === "vc_12t" && typeof priority === "number" && priority <= 2
  )
}

// The same again, honouring "own properties only" the obvious way.
const own = (node: unknown, key: string): unknown =>
  typeof node === "object" && node !== null && !Array.isArray(node) && Object.hasOwn(node, key)
    ? (node as Record<string, unknown>)[key]
    : undefined
const handWrittenOwn = (payload: unknown): boolean => {
  const tour = own(payload, "tour")
  const name = own(tour, "name")
  if (typeof name !== "string" || !name.startsWith("Line ")) return false
  if (own(tour, "status") === "cancelled") return false
  const properties = own(tour, "properties")
  const weight = own(properties, "prop_weight")
  if (typeof weight === "number" && weight > 1000 && weight !== Number.POSITIVE_INFINITY) return true
  const priority = own(properties, "prop_priority")
  return (
    own(properties, "prop_express") === true &&
    own(tour, "vehicleClass") === "vc_12t" &&
    typeof priority === "number" &&
    priority <= 2 &&
    priority !== Number.NEGATIVE_INFINITY
  )
}

// The equivalent MongoDB query: $ne also matches a missing field, like not_equals.
const mongoQuery = {
  "tour.name": { $regex: /^Line / },
  "tour.status": { $ne: "cancelled" },
  $or: [
    { "tour.properties.prop_weight": { $gt: 1000 } },
    {
      "tour.properties.prop_express": true,
      "tour.vehicleClass": "vc_12t",
      "tour.properties.prop_priority": { $lte: 2 }
    }
  ]
}
// sift is CommonJS with an ES `default`: under NodeNext its callable is `.default`.
const siftTest = siftModule.default(mongoQuery)
const mingoQuery = new Query(mongoQuery)

// The equivalent JsonLogic rule: strict (in)equality; `null <= 2` is true in JavaScript, so
// the priority needs a presence check to mean what lte means.
const logic = {
  and: [
    { "===": [{ substr: [{ var: "tour.name" }, 0, 5] }, "Line "] },
    { "!==": [{ var: "tour.status" }, "cancelled"] },
    {
      or: [
        { ">": [{ var: "tour.properties.prop_weight" }, 1000] },
        {
          and: [
            { "===": [{ var: "tour.properties.prop_express" }, true] },
            { "===": [{ var: "tour.vehicleClass" }, "vc_12t"] },
            { "!==": [{ var: "tour.properties.prop_priority" }, null] },
            { "<=": [{ var: "tour.properties.prop_priority" }, 2] }
          ]
        }
      ]
    }
  ]
}

const predicates: Record<string, (payload: unknown) => boolean> = {
  "hand-written JS": handWritten,
  "Filter.compileFilter": compiled,
  "hand-written, Object.hasOwn": handWrittenOwn,
  "Filter (closure engine)": closures,
  sift: (payload) => siftTest(payload),
  mingo: (payload) => mingoQuery.test(payload as Record<string, unknown>),
  "json-logic-js": (payload) => jsonLogic.apply(logic as Parameters<typeof jsonLogic.apply>[0], payload) === true
}
const PEERS = ["sift", "mingo", "json-logic-js"]

// Sanity: every contender decides every payload exactly like the hand-written predicate.
let matching = 0
for (const payload of payloads) if (handWritten(payload)) matching++
for (const [name, predicate] of Object.entries(predicates)) {
  const disagreements = payloads.filter((payload) => predicate(payload) !== handWritten(payload)).length
  if (disagreements > 0)
    throw new Error(`${name} disagrees with the hand-written predicate on ${disagreements} payloads`)
}
console.log(
  `${PAYLOADS} tour payloads, ${matching} match (${((matching / PAYLOADS) * 100).toFixed(1)} %); all contenders agree on every payload`
)

// One driver per contender, each its own function (own type feedback), so every predicate is
// called from a monomorphic site and may be inlined, as in a real caller with one filter.
const driver = (predicate: (payload: unknown) => boolean): (() => boolean) =>
  new Function(
    "predicate",
    "payloads",
    `let i = 0
    return function drive() {
      const result = predicate(payloads[i])
      i = i + 1 === payloads.length ? 0 : i + 1
      return result
    }`
  )(predicate, payloads)
const drivers = Object.entries(predicates).map(([name, predicate]) => [name, driver(predicate)] as const)

const rates = new Map<string, Array<number>>(Object.keys(predicates).map((name) => [name, []]))
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, drive] of drivers) rates.get(name)!.push(measure(name, drive, SECONDS).opsPerSecond)
}

const rows: Array<Measurement> = [...rates].map(([name, all]) => ({ name, opsPerSecond: median(all) }))
const pairedRatio = (ours: string, other: (round: number) => number): number =>
  median(rates.get(ours)!.map((rate, round) => rate / other(round)))

console.log(`median of ${ROUNDS} interleaved slices of ${SECONDS} s per contender`)
report("filter evaluations", rows, "hand-written JS", "evals/s")
// Compiling is done once per stored filter; for scale, how long it takes.
const compileRate = measure("compileFilter", () => Filter.compileFilter(filter), 0.5).opsPerSecond
const dated: Filter.FilterGroup = {
  match: "all",
  conditions: [
    ...filter.conditions,
    { field: "tour.properties.prop_due", operator: "on_or_after", value: "2027-03-28" }
  ]
}
const datedRate = measure("compileFilter with a date", () => Filter.compileFilter(dated), 0.5).opsPerSecond
console.log(
  `\ncompileFilter: ${(1e6 / compileRate).toFixed(0)} µs per filter (${(1e6 / datedRate).toFixed(0)} µs with a date condition)`
)

console.log("\nTargets (median of per-round ratios, contenders measured back to back):")
const fastestPeer = (round: number) => Math.max(...PEERS.map((peer) => rates.get(peer)![round]!))
const results = [
  target(
    "compiled / hand-written",
    pairedRatio("Filter.compileFilter", (round) => rates.get("hand-written JS")![round]!),
    0.5
  ),
  target("compiled / fastest peer", pairedRatio("Filter.compileFilter", fastestPeer), 8)
]
process.exit(results.every(Boolean) ? 0 : 1)
