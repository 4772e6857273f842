/** Schema annotations from which filter fields, docs and OpenAPI are derived. */
import * as Option from "effect/Option"
import type * as AST from "effect/SchemaAST"

/** Overrides the filter-field type derived from the AST (timestamps and ISO days are `date`). */
export const FieldTypeId: unique symbol = Symbol.for("@waybill/events/annotation/FieldType")

/** On a schema that takes any JSON value: the schema filters see it as (its type, its options). */
export const FilterAsId: unique symbol = Symbol.for("@waybill/events/annotation/FilterAs")

/** Names the entity a struct is, so `<path>.properties.<id>` fields come from its definitions. */
export const EntityId: unique symbol = Symbol.for("@waybill/events/annotation/Entity")

/** On a payload property: conditions under it get no `is_set`/`is_not_set` (order-created tour). */
export const NoPresenceId: unique symbol = Symbol.for("@waybill/events/annotation/NoPresence")

/** On a payload property: its absence makes every condition under it false (callout tour). */
export const GuardedId: unique symbol = Symbol.for("@waybill/events/annotation/Guarded")

/** On a property: never offered to filters (callouts of callout-action-created). */
export const NotFilterableId: unique symbol = Symbol.for("@waybill/events/annotation/NotFilterable")

export const get = <A>(annotated: AST.Annotated, id: symbol): Option.Option<A> =>
  Object.hasOwn(annotated.annotations, id) ? Option.some(annotated.annotations[id] as A) : Option.none()
