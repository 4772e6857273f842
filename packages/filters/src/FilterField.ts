/**
 * The filter-field catalogue entry: a dotted payload path a filter may test, its type and its
 * operators. `@waybill/events` derives these per event type.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** Field types. `multiselect`, `tags` and `document` are listed but not selectable. @since 0.1.0 */
export const FieldType = Schema.Literal(
  "text",
  "number",
  "checkbox",
  "select",
  "date",
  "multiselect",
  "tags",
  "document"
)

/** @since 0.1.0 */
export type FieldType = typeof FieldType.Type

/** Operators per field type, without the presence operators. @since 0.1.0 */
export const valueOperators = {
  text: [
    "equals",
    "not_equals",
    "contains",
    "not_contains",
    "begins_with",
    "not_begins_with",
    "ends_with",
    "not_ends_with"
  ],
  number: ["equals", "not_equals", "gt", "gte", "lt", "lte"],
  checkbox: ["is_checked", "is_not_checked"],
  select: ["is", "is_not"],
  date: ["on", "not_on", "before", "after", "on_or_before", "on_or_after"],
  multiselect: [],
  tags: [],
  document: []
} as const satisfies Record<FieldType, ReadonlyArray<string>>

/** The presence operators: they look at presence only, whatever the type, and take no operand. @since 0.1.0 */
export const presenceOperators = ["is_set", "is_not_set"] as const

/** Every operator a filter condition may name. @since 0.1.0 */
export const Operator = Schema.Literal(
  ...valueOperators.text,
  ...valueOperators.number.filter((op) => op !== "equals" && op !== "not_equals"),
  ...valueOperators.checkbox,
  ...valueOperators.select,
  ...valueOperators.date,
  ...presenceOperators
)

/** @since 0.1.0 */
export type Operator = typeof Operator.Type

/** Whether a field type can be used in a filter at all. @since 0.1.0 */
export const isSelectable = (type: FieldType): boolean => valueOperators[type].length > 0

/** The operators a field of this type offers; `presence: false` drops `is_set` and `is_not_set`. @since 0.1.0 */
export const operatorsFor = (type: FieldType, options: { readonly presence: boolean } = { presence: true }) =>
  isSelectable(type)
    ? ([...valueOperators[type], ...(options.presence ? presenceOperators : [])] as ReadonlyArray<Operator>)
    : ([] as ReadonlyArray<Operator>)

/** A select option: conditions compare against its `id`. @since 0.1.0 */
export const SelectOption = Schema.Struct({ id: Schema.String, label: Schema.String }).annotations({
  identifier: "SelectOption"
})

/** @since 0.1.0 */
export type SelectOption = typeof SelectOption.Type

/** One entry of the filter-field catalogue, as served by `GET /webhooks/filter-fields`. @since 0.1.0 */
export const FilterField = Schema.Struct({
  path: Schema.String,
  type: FieldType,
  selectable: Schema.Boolean,
  operators: Schema.Array(Operator),
  options: Schema.optional(Schema.Array(SelectOption))
}).annotations({ identifier: "FilterField" })

/** @since 0.1.0 */
export type FilterField = typeof FilterField.Type
