/**
 * Delivery filters without a server: validate a filter against an event's filter fields, compile
 * it once, then test payloads.
 *
 *   npx tsx examples/embed/src/domain/filters.ts
 */
import { filterFields, guardedRoots } from "@waybill/events/FilterFields"
import type { PropertyDefinition } from "@waybill/events/PropertyDefinition"
import { compileFilter, validateFilter } from "@waybill/filters/Filter"
import * as Either from "effect/Either"

const properties: ReadonlyArray<PropertyDefinition> = [
  { entity: "tour", id: "prop_region", type: "select", name: "Region", options: [{ id: "opt_north", label: "North" }] }
]
const fields = filterFields("tour-created", properties)

// Every problem is reported, with its path inside the filter.
export const refused = validateFilter(
  {
    conditions: [
      { field: "tour.status", operator: "gt", value: 3 },
      { field: "tour.nope", operator: "is_set" }
    ]
  },
  fields
)

const filter = Either.getOrThrow(
  validateFilter(
    {
      match: "all",
      conditions: [
        { field: "tour.status", operator: "equals", value: "planned" },
        { field: "tour.properties.prop_region", operator: "is", value: "opt_north" }
      ]
    },
    fields
  )
)
export const matches = compileFilter(filter, { guardedRoots: guardedRoots("tour-created") })

export const north = matches({ tour: { id: "tour_1", status: "planned", properties: { prop_region: "opt_north" } } })
export const south = matches({ tour: { id: "tour_2", status: "planned", properties: { prop_region: "opt_south" } } })

console.log({ north, south, refused: Either.isLeft(refused) ? refused.left : [] })
