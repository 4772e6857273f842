/**
 * The catalogue's filter fields and guarded roots, used as the webhooks layer uses them with
 * `@waybill/filters`: validate at registration against `filterFields`, compile with
 * `guardedRoots`, evaluate on producer payloads.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Filter from "@waybill/filters/Filter"
import * as Either from "effect/Either"
import type * as Entity from "../src/Entity.js"
import type * as EntityAction from "../src/EntityAction.js"
import type { EventType } from "../src/EventType.js"
import { filterFields, guardedRoots } from "../src/FilterFields.js"
import * as Producer from "../src/Producer.js"
import type { PropertyDefinition } from "../src/PropertyDefinition.js"
import { sampleOf } from "./fixtures.js"

const definitions: ReadonlyArray<PropertyDefinition> = [
  {
    entity: "tour",
    id: "prop_region",
    type: "select",
    name: "Region",
    options: [
      { id: "opt_north", label: "North" },
      { id: "opt_south", label: "South" }
    ]
  },
  { entity: "tour", id: "prop_tags", type: "tags", name: "Tags" }
]

const register = (type: EventType, filter: unknown) => Filter.validateFilter(filter, filterFields(type, definitions))

const compile = (type: EventType, filter: unknown) =>
  Filter.compileFilter(Either.getOrThrow(register(type, filter)), { guardedRoots: guardedRoots(type) })

const tour = (region: string): Entity.Tour => ({ id: "tour_1", status: "planned", properties: { prop_region: region } })

describe("filter fields with @waybill/filters", () => {
  it("filters tour-action-created on action.payload.type and a select property", () => {
    const matches = compile("tour-action-created", {
      conditions: [
        { field: "action.payload.type", operator: "equals", value: "advance" },
        { field: "tour.properties.prop_region", operator: "is", value: "opt_north" }
      ]
    })
    const action = sampleOf("TourAction") as EntityAction.TourAction
    assert.isTrue(matches(Producer.tourActionCreated({ tour: tour("opt_north"), action }).payload))
    assert.isFalse(matches(Producer.tourActionCreated({ tour: tour("opt_south"), action }).payload))
  })

  it("refuses fields the catalogue does not offer", () => {
    for (const [type, field, operator] of [
      ["callout-action-created", "callouts.0.id", "equals"],
      ["callout-action-created", "tour.status", "equals"],
      ["tour-deleted", "tour.properties.prop_region", "is"],
      ["shipments-created", "shipments.0.id", "equals"],
      ["order-created", "tour.status", "is_set"],
      ["tour-created", "tour.properties.prop_tags", "is_set"]
    ] as const) {
      const value = operator === "is" ? "opt_north" : operator === "equals" ? "x" : undefined
      const result = register(type, { conditions: [{ field, operator, ...(value === undefined ? {} : { value }) }] })
      assert.isTrue(Either.isLeft(result), `${type} ${field} ${operator}`)
    }
    assert.isTrue(
      Either.isRight(register("order-created", { conditions: [{ field: "order.id", operator: "is_set" }] }))
    )
  })

  it("on callout-action-created without a tour, every tour condition is false, negated ones included", () => {
    const negated = compile("callout-action-created", {
      conditions: [{ field: "tour.properties.prop_region", operator: "is_not", value: "opt_north" }]
    })
    const notSet = compile("callout-action-created", { conditions: [{ field: "tour.id", operator: "is_not_set" }] })
    const action: Producer.CalloutActionInput = {
      id: "act_1",
      payload: { type: "cancel", dispatchContext: { reason: "system" } },
      createdAtMilliseconds: 1_798_000_000_000
    }
    const cancellation = Producer.calloutActionCreated({
      callouts: [],
      modifiedCalloutIds: [],
      secretAuction: false,
      action
    }).payload
    assert.isFalse(negated(cancellation))
    assert.isFalse(notSet(cancellation))
    const raised = Producer.calloutActionCreated({
      callouts: [],
      modifiedCalloutIds: [],
      secretAuction: false,
      action,
      tour: tour("opt_south")
    }).payload
    assert.isTrue(negated(raised))
  })
})
