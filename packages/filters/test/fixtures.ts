import * as FilterField from "@waybill/filters/FilterField"

const field = (
  path: string,
  type: FilterField.FieldType,
  options: { readonly presence?: boolean; readonly options?: ReadonlyArray<FilterField.SelectOption> } = {}
): FilterField.FilterField => ({
  path,
  type,
  selectable: FilterField.isSelectable(type),
  operators: FilterField.operatorsFor(type, { presence: options.presence ?? true }),
  ...(options.options === undefined ? {} : { options: options.options })
})

/** A catalogue shaped like `tour-created`'s, with one property of every type. */
export const tourFields: ReadonlyArray<FilterField.FilterField> = [
  field("tour.id", "text"),
  field("tour.status", "text"),
  field("tour.name", "text"),
  field("tour.triggerAt", "date"),
  field("tour.properties.prop_region", "select", {
    options: [
      { id: "opt_north", label: "North" },
      { id: "opt_south", label: "South" }
    ]
  }),
  field("tour.properties.prop_weight", "number"),
  field("tour.properties.prop_express", "checkbox"),
  field("tour.properties.prop_due", "date"),
  field("tour.properties.prop_note", "text"),
  field("tour.properties.prop_empty_select", "select", { options: [] }),
  field("tour.properties.prop_tags", "tags"),
  field("tour.properties.prop_multi", "multiselect"),
  field("tour.properties.prop_doc", "document")
]

/** Like `order-created`: the optional tour's fields offer no presence operators. */
export const orderFields: ReadonlyArray<FilterField.FilterField> = [
  field("order.id", "text"),
  field("tour.id", "text", { presence: false }),
  field("tour.properties.prop_weight", "number", { presence: false })
]
