/**
 * The filter fields of each event type, derived from its payload schema: every scalar reachable
 * through objects (not arrays or maps) by dotted path, plus `<entity>.properties.<id>`.
 * @since 0.1.0
 */
import * as FilterField from "@waybill/filters/FilterField"
import * as Option from "effect/Option"
import * as AST from "effect/SchemaAST"
import type { EventType } from "./EventType.js"
import * as Annotations from "./internal/annotations.js"
import { schemas } from "./Payload.js"
import type { PropertyDefinition } from "./PropertyDefinition.js"

type SelectOption = typeof FilterField.SelectOption.Type

type Slot =
  | { readonly _tag: "Field"; readonly field: FilterField.FilterField }
  | { readonly _tag: "Properties"; readonly path: string; readonly entity: string; readonly presence: boolean }

const field = (
  path: string,
  type: FilterField.FieldType,
  presence: boolean,
  options?: ReadonlyArray<SelectOption>
): FilterField.FilterField => ({
  path,
  type,
  selectable: FilterField.isSelectable(type),
  operators: FilterField.operatorsFor(type, { presence }),
  ...(options === undefined ? {} : { options })
})

const join = (path: string, name: string) => (path === "" ? name : `${path}.${name}`)

const isNull = (ast: AST.AST) => AST.isLiteral(ast) && ast.literal === null

interface Inherited {
  readonly presence: boolean
  readonly fieldType: Option.Option<FilterField.FieldType>
  readonly entity: Option.Option<string>
}

const walk = (ast: AST.AST, path: string, inherited: Inherited): ReadonlyArray<Slot> => {
  const here: Inherited = {
    presence: inherited.presence,
    fieldType: Option.orElse(
      Annotations.get<FilterField.FieldType>(ast, Annotations.FieldTypeId),
      () => inherited.fieldType
    ),
    entity: Option.orElse(Annotations.get<string>(ast, Annotations.EntityId), () => inherited.entity)
  }
  const leaf = (type: FilterField.FieldType, options?: ReadonlyArray<SelectOption>): ReadonlyArray<Slot> => [
    {
      _tag: "Field",
      field: field(
        path,
        Option.getOrElse(here.fieldType, () => type),
        here.presence,
        options
      )
    }
  ]
  switch (ast._tag) {
    case "Refinement":
      return walk(ast.from, path, here)
    case "Transformation":
      return walk(ast.to, path, here)
    case "StringKeyword":
      return leaf("text")
    case "NumberKeyword":
      return leaf("number")
    case "BooleanKeyword":
      return leaf("checkbox")
    case "Literal":
      if (typeof ast.literal === "string") return leaf("select", [{ id: ast.literal, label: ast.literal }])
      if (typeof ast.literal === "number") return leaf("number")
      if (typeof ast.literal === "boolean") return leaf("checkbox")
      return []
    case "Union": {
      const members = ast.types.filter((member) => !isNull(member))
      if (members.length === 1) return walk(members[0]!, path, here)
      const literals = members.flatMap((member) =>
        AST.isLiteral(member) && typeof member.literal === "string" ? [member.literal] : []
      )
      // A union of objects has no single set of paths: not offered.
      return literals.length === members.length
        ? leaf(
            "select",
            literals.map((id) => ({ id, label: id }))
          )
        : []
    }
    case "TypeLiteral": {
      // Only whole entities carry custom properties, one field per definition.
      const entity = here.entity
      const own = ast.propertySignatures.flatMap((property): ReadonlyArray<Slot> => {
        if (typeof property.name !== "string") return []
        if (
          Option.isSome(Annotations.get(property, Annotations.NotFilterableId)) ||
          Option.isSome(Annotations.get(property.type, Annotations.NotFilterableId))
        ) {
          return []
        }
        if (Option.isSome(entity) && property.name === "properties") return []
        const presence = here.presence && Option.isNone(Annotations.get(property, Annotations.NoPresenceId))
        return walk(property.type, join(path, property.name), {
          presence,
          fieldType: Option.none(),
          entity: Option.none()
        })
      })
      return Option.isSome(entity)
        ? [
            ...own,
            { _tag: "Properties", path: join(path, "properties"), entity: entity.value, presence: here.presence }
          ]
        : own
    }
    case "UnknownKeyword":
      // A field the spec names without a type: filtered as its `FilterAsId` schema, else not.
      return Option.match(Annotations.get<AST.AST>(ast, Annotations.FilterAsId), {
        onNone: () => [],
        onSome: (filterAs) => walk(filterAs, path, here)
      })
    default:
      // Arrays (TupleType), maps and never: arrays are not traversed implicitly.
      return []
  }
}

const templates = new Map<EventType, ReadonlyArray<Slot>>()

const templateFor = (eventType: EventType): ReadonlyArray<Slot> => {
  let template = templates.get(eventType)
  if (template === undefined) {
    template = walk(schemas[eventType].ast, "", { presence: true, fieldType: Option.none(), entity: Option.none() })
    templates.set(eventType, template)
  }
  return template
}

const propertyField = (path: string, definition: PropertyDefinition, presence: boolean) =>
  field(`${path}.${definition.id}`, definition.type, presence, definition.options)

/**
 * The fields a filter may use on an event type, in payload order, each entity's custom properties
 * after its fields in definition order.
 * @since 0.1.0
 */
export const filterFields = (
  eventType: EventType,
  propertyDefinitions: ReadonlyArray<PropertyDefinition>
): ReadonlyArray<FilterField.FilterField> =>
  templateFor(eventType).flatMap((slot) =>
    slot._tag === "Field"
      ? [slot.field]
      : propertyDefinitions
          .filter((definition) => definition.entity === slot.entity)
          .map((definition) => propertyField(slot.path, definition, slot.presence))
  )

/**
 * The payload roots whose absence makes every condition under them false, negated ones included
 * (a `callout-action-created` without a tour); hand them to the filter compiler.
 * @since 0.1.0
 */
export const guardedRoots = (eventType: EventType): ReadonlyArray<string> => {
  const visit = (ast: AST.AST): ReadonlyArray<string> =>
    AST.isRefinement(ast)
      ? visit(ast.from)
      : AST.isTypeLiteral(ast)
        ? ast.propertySignatures.flatMap((property) =>
            typeof property.name === "string" && Option.isSome(Annotations.get(property, Annotations.GuardedId))
              ? [property.name]
              : []
          )
        : []
  return visit(schemas[eventType].ast)
}
