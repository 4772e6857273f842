import { assert, describe, it } from "@effect/vitest"
import * as FilterField from "@waybill/filters/FilterField"
import * as fc from "fast-check"
import * as Entity from "../src/Entity.js"
import * as EventType from "../src/EventType.js"
import { filterFields, guardedRoots } from "../src/FilterFields.js"
import type { PropertyDefinition } from "../src/PropertyDefinition.js"
import { fullPayload, specTable } from "./fixtures.js"

const definitions: ReadonlyArray<PropertyDefinition> = [
  { entity: "tour", id: "prop_text", type: "text", name: "Reference" },
  { entity: "tour", id: "prop_number", type: "number", name: "Weight" },
  { entity: "tour", id: "prop_check", type: "checkbox", name: "Urgent" },
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
  { entity: "tour", id: "prop_day", type: "date", name: "Day" },
  { entity: "tour", id: "prop_multi", type: "multiselect", name: "Multi", options: [{ id: "o1", label: "One" }] },
  { entity: "tour", id: "prop_tags", type: "tags", name: "Tags" },
  { entity: "tour", id: "prop_doc", type: "document", name: "Doc" },
  { entity: "order", id: "prop_po", type: "text", name: "PO" },
  { entity: "shipment", id: "prop_fragile", type: "checkbox", name: "Fragile" },
  { entity: "commentReaction", id: "prop_mood", type: "text", name: "Mood" }
]

const paths = (type: EventType.EventType, defs: ReadonlyArray<PropertyDefinition> = definitions) =>
  filterFields(type, defs).map((field) => field.path)

const byPath = (type: EventType.EventType, path: string) => {
  const field = filterFields(type, definitions).find((candidate) => candidate.path === path)
  assert.isDefined(field, `${type} has no field ${path}`)
  return field!
}

const allOperators = (type: FilterField.FieldType) => FilterField.operatorsFor(type, { presence: true })

describe("filterFields", () => {
  it("derives dotted paths from the payload schema (tour.status, action.payload.type)", () => {
    const fields = paths("tour-action-created")
    for (const path of ["tour.id", "tour.status", "tour.substatus", "action.payload.type", "oldStatus", "newStatus"]) {
      assert.include(fields, path)
    }
    assert.deepStrictEqual(byPath("tour-action-created", "tour.status"), {
      path: "tour.status",
      type: "text",
      selectable: true,
      operators: allOperators("text")
    })
    assert.strictEqual(byPath("tour-action-created", "action.createdAt").type, "date")
    assert.strictEqual(byPath("leg-action-created", "action.payload.type").type, "text")
  })

  it("types select fields with their options and timestamps as dates", () => {
    assert.deepStrictEqual(byPath("mailbox-status-changed", "newStatus").options, [
      { id: "active", label: "active" },
      { id: "inactive", label: "inactive" }
    ])
    assert.strictEqual(byPath("transport-draft-action-created", "transportDraft.isValid").type, "checkbox")
    assert.strictEqual(byPath("transport-draft-action-created", "transportDraft.createdAt").type, "date")
    assert.strictEqual(byPath("transport-draft-action-created", "action.payload.type").type, "select")
  })

  it("offers custom properties as <entity>.properties.<id>, typed by their definitions", () => {
    const expected: ReadonlyArray<[string, FilterField.FieldType, boolean]> = [
      ["tour.properties.prop_text", "text", true],
      ["tour.properties.prop_number", "number", true],
      ["tour.properties.prop_check", "checkbox", true],
      ["tour.properties.prop_region", "select", true],
      ["tour.properties.prop_day", "date", true],
      ["tour.properties.prop_multi", "multiselect", false],
      ["tour.properties.prop_tags", "tags", false],
      ["tour.properties.prop_doc", "document", false]
    ]
    for (const [path, type, selectable] of expected) {
      const field = byPath("tour-created", path)
      assert.strictEqual(field.type, type, path)
      assert.strictEqual(field.selectable, selectable, path)
      assert.deepStrictEqual(field.operators, selectable ? allOperators(type) : [], path)
    }
    assert.deepStrictEqual(byPath("tour-created", "tour.properties.prop_region").options, [
      { id: "opt_north", label: "North" },
      { id: "opt_south", label: "South" }
    ])
    assert.notInclude(paths("tour-created"), "tour.properties")
    assert.include(paths("order-updated"), "order.properties.prop_po")
    assert.include(paths("shipment-updated"), "shipment.properties.prop_fragile")
    assert.include(paths("comment-reaction-added"), "reaction.properties.prop_mood")
  })

  it("offers an entity's properties only on its own events", () => {
    assert.isFalse(paths("order-updated").some((path) => path.startsWith("tour.")))
    assert.isFalse(paths("tour-created").some((path) => path.includes("prop_po")))
    assert.isFalse(paths("shipper-created").some((path) => path.includes("prop_")))
  })

  it("id-only events offer their id as text and no property fields", () => {
    for (const [type, field] of [
      ["tour-deleted", "tourId"],
      ["shipment-deleted", "shipmentId"],
      ["mailbox-mail-received", "mailboxId"]
    ] as const) {
      assert.deepStrictEqual(filterFields(type, definitions), [
        { path: field, type: "text", selectable: true, operators: allOperators("text") }
      ])
    }
  })

  it("list events offer no per-item fields", () => {
    for (const type of ["shipments-created", "transport-drafts-created", "transport-drafts-deleted"] as const) {
      assert.deepStrictEqual(filterFields(type, definitions), [], type)
    }
  })

  it("order-created's optional tour offers no is_set / is_not_set, its order does", () => {
    const fields = filterFields("order-created", definitions)
    const tourFields = fields.filter((field) => field.path.startsWith("tour."))
    assert.isAbove(tourFields.length, 8)
    assert.include(
      tourFields.map((field) => field.path),
      "tour.properties.prop_region"
    )
    for (const field of tourFields) {
      assert.notInclude(field.operators, "is_set", field.path)
      assert.notInclude(field.operators, "is_not_set", field.path)
    }
    assert.deepStrictEqual(byPath("order-created", "tour.status").operators, [...FilterField.valueOperators.text])
    assert.deepStrictEqual(byPath("order-created", "order.id").operators, allOperators("text"))
    assert.deepStrictEqual(byPath("order-created", "order.properties.prop_po").operators, allOperators("text"))
    assert.isFalse(fields.some((field) => field.path.startsWith("documentLinks")))
  })

  it("callout-action-created offers tour.id, tour.properties.* and action.*, nothing under callouts", () => {
    const fields = paths("callout-action-created")
    assert.deepStrictEqual(fields.filter((path) => path.startsWith("tour.")).slice(0, 1), ["tour.id"])
    assert.deepStrictEqual(
      fields.filter((path) => path.startsWith("tour.") && path !== "tour.id"),
      definitions
        .filter((definition) => definition.entity === "tour")
        .map((definition) => `tour.properties.${definition.id}`)
    )
    assert.deepStrictEqual(
      fields.filter((path) => path.startsWith("action.")),
      ["action.id", "action.payload.type", "action.createdAt", "action.createdAtMilliseconds"]
    )
    assert.isFalse(fields.some((path) => path.startsWith("callouts")))
    assert.notInclude(fields, "tour.status")
    assert.deepStrictEqual(
      fields.filter((path) => !path.startsWith("tour.") && !path.startsWith("action.")),
      []
    )
  })

  it("guards the callout tour and nothing else", () => {
    assert.deepStrictEqual(guardedRoots("callout-action-created"), ["tour"])
    for (const type of EventType.all) {
      if (type !== "callout-action-created") assert.deepStrictEqual(guardedRoots(type), [], type)
    }
  })

  it("offers is_set / is_not_set on every selectable field outside order-created's tour", () => {
    for (const type of EventType.all) {
      for (const field of filterFields(type, definitions)) {
        if (!field.selectable || (type === "order-created" && field.path.startsWith("tour."))) continue
        assert.include(field.operators, "is_set", `${type} ${field.path}`)
        assert.include(field.operators, "is_not_set", `${type} ${field.path}`)
      }
    }
  })

  it("every built-in field points at a scalar of a full payload; paths are unique", () => {
    const payloads = new Map(specTable.map(([type, keys]) => [type, fullPayload(keys)]))
    for (const type of EventType.all) {
      const fields = filterFields(type, definitions)
      assert.strictEqual(new Set(fields.map((field) => field.path)).size, fields.length, type)
      for (const field of fields) {
        if (field.path.includes(".properties.")) continue
        let value: unknown = payloads.get(type)
        for (const segment of field.path.split(".")) {
          value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[segment] : undefined
        }
        if (value === undefined) continue // optional in the sample
        assert.isTrue(
          value === null || ["string", "number", "boolean"].includes(typeof value),
          `${type} ${field.path} is ${JSON.stringify(value)}`
        )
      }
    }
  })

  it("property: any definitions map to one well-formed field each on every whole-entity event", () => {
    const definition = fc.record({
      entity: fc.constantFrom(...Entity.entityNames),
      id: fc.stringMatching(/^[a-z_]{1,8}$/),
      type: fc.constantFrom("text", "number", "checkbox", "select", "date", "multiselect", "tags", "document"),
      name: fc.string()
    })
    fc.assert(
      fc.property(fc.uniqueArray(definition, { selector: (d) => `${d.entity}.${d.id}`, maxLength: 12 }), (raw) => {
        const defs: ReadonlyArray<PropertyDefinition> = raw.map((d) =>
          d.type === "select" || d.type === "multiselect" ? { ...d, options: [{ id: "o", label: "O" }] } : d
        )
        for (const type of EventType.all) {
          const base = filterFields(type, [])
          const fields = filterFields(type, defs)
          const custom = fields.filter((field) => field.path.includes(".properties."))
          assert.strictEqual(fields.length, base.length + custom.length)
          for (const field of custom) {
            const [root, , id] = field.path.split(".")
            const def = defs.find((d) => d.id === id && field.type === d.type)
            assert.isDefined(def, field.path)
            assert.strictEqual(field.selectable, FilterField.isSelectable(def!.type))
            const presence = !(type === "order-created" && root === "tour")
            assert.deepStrictEqual(field.operators, FilterField.operatorsFor(def!.type, { presence }))
          }
          if (["tour-deleted", "shipment-deleted", "mailbox-mail-received", "shipments-created"].includes(type)) {
            assert.deepStrictEqual(custom, [])
          }
        }
      }),
      { numRuns: 50 }
    )
  })
})
