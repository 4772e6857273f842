/**
 * Renders `docs/events.md` from the catalogue's schemas, so it cannot disagree with the code.
 * A test fails when the file is stale; `packages/events/scripts/generate-docs.ts` rewrites it.
 * @since 0.1.0
 */
import * as FilterField from "@waybill/filters/FilterField"
import * as Option from "effect/Option"
import * as AST from "effect/SchemaAST"
import { entityNames } from "./Entity.js"
import { all, type EventType } from "./EventType.js"
import { filterFields, guardedRoots } from "./FilterFields.js"
import { decisions } from "./internal/decisions.js"
import { schemas } from "./Payload.js"
import type { PropertyDefinition } from "./PropertyDefinition.js"

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ")

const identifierOf = (ast: AST.AST) => Option.getOrUndefined(AST.getIdentifierAnnotation(ast))
const titleOf = (ast: AST.AST) => Option.getOrUndefined(AST.getTitleAnnotation(ast))
const descriptionOf = (ast: AST.Annotated) => Option.getOrUndefined(AST.getDescriptionAnnotation(ast))

const anchor = (name: string) => `#${name.toLowerCase()}`

const typeName = (ast: AST.AST, link = true): string => {
  const identifier = identifierOf(ast)
  if (identifier !== undefined) return link ? `[${identifier}](${anchor(identifier)})` : identifier
  switch (ast._tag) {
    case "Refinement":
      return titleOf(ast) ?? typeName(ast.from, link)
    case "Transformation":
      return typeName(ast.to, link)
    case "StringKeyword":
      return "string"
    case "NumberKeyword":
      return "number"
    case "BooleanKeyword":
      return "boolean"
    case "UnknownKeyword":
      return "unknown"
    case "NeverKeyword":
      return "never (absent)"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union":
      return ast.types.map((member) => typeName(member, link)).join(" | ")
    case "TupleType":
      return `Array<${ast.rest.length > 0 ? typeName(ast.rest[0]!.type, link) : "unknown"}>`
    case "TypeLiteral":
      return "object"
    default:
      return ast._tag
  }
}

const structOf = (ast: AST.AST): AST.TypeLiteral | undefined =>
  AST.isTypeLiteral(ast) ? ast : AST.isRefinement(ast) ? structOf(ast.from) : undefined

// Every identified schema reachable from the payloads, in first-seen order (payloads excluded).
const collectEntities = (): ReadonlyArray<AST.AST> => {
  const seen = new Set<string>()
  const found: Array<AST.AST> = []
  const visit = (ast: AST.AST, top: boolean): void => {
    const identifier = identifierOf(ast)
    if (identifier !== undefined && !top) {
      if (seen.has(identifier)) return
      seen.add(identifier)
      found.push(ast)
    }
    const children = AST.isRefinement(ast)
      ? [ast.from]
      : AST.isUnion(ast)
        ? ast.types
        : AST.isTupleType(ast)
          ? ast.rest.map((element) => element.type)
          : AST.isTypeLiteral(ast)
            ? ast.propertySignatures.map((property) => property.type)
            : []
    for (const child of children) visit(child, false)
  }
  for (const type of all) visit(schemas[type].ast, true)
  return found
}

// A field's note: its own description, else the description of an anonymous, untitled
// non-keyword type (built-in keyword descriptions such as "a string" say nothing).
const noteOf = (property: AST.PropertySignature): string => {
  const own = descriptionOf(property)
  if (own !== undefined) return own
  const type = property.type
  if (AST.isRefinement(type) || AST.isTypeLiteral(type)) {
    if (identifierOf(type) === undefined && titleOf(type) === undefined) return descriptionOf(type) ?? ""
  }
  return ""
}

const fieldRows = (struct: AST.TypeLiteral): Array<string> =>
  struct.propertySignatures.map(
    (property) =>
      `| \`${String(property.name)}\` | ${cell(typeName(property.type))} | ${property.isOptional ? "no" : "yes"} | ${cell(
        noteOf(property)
      )} |`
  )

const payloadSignature = (type: EventType): string => {
  const struct = structOf(schemas[type].ast)!
  return `{ ${struct.propertySignatures
    .map((property) => `${String(property.name)}${property.isOptional ? "?" : ""}: ${typeName(property.type, false)}`)
    .join(", ")} }`
}

// One stand-in definition per entity shows where custom properties appear.
const placeholders: ReadonlyArray<PropertyDefinition> = entityNames.map((entity) => ({
  entity,
  id: "<propertyId>",
  type: "text",
  name: "placeholder"
}))

const eventSection = (type: EventType): Array<string> => {
  const ast = schemas[type].ast
  const struct = structOf(ast)!
  const own = filterFields(type, [])
  const custom = filterFields(type, placeholders).filter((field) => field.path.includes(".properties."))
  const noPresence = own.some((field) => field.selectable && !field.operators.includes("is_set"))
  const guarded = guardedRoots(type)
  const lines = [
    `### ${type}`,
    "",
    descriptionOf(ast) ?? "",
    "",
    "| key | type | required | notes |",
    "|---|---|---|---|",
    ...fieldRows(struct),
    ""
  ]
  if (own.length === 0) {
    lines.push("Filter fields: none (a list or nothing per item to filter on).", "")
  } else {
    lines.push(
      `Filter fields: ${own
        .map(
          (field) =>
            `\`${field.path}\` (${field.type}${field.options === undefined ? "" : `: ${field.options.map((option) => option.id).join(", ")}`})`
        )
        .join(", ")}.`,
      ""
    )
  }
  if (custom.length > 0) {
    lines.push(`Custom properties: ${[...new Set(custom.map((field) => `\`${field.path}\``))].join(", ")}.`, "")
  }
  if (noPresence) lines.push("The fields of the optional `tour` offer no `is_set` / `is_not_set`.", "")
  if (guarded.length > 0) {
    lines.push(
      `Guarded roots: ${guarded.map((root) => `\`${root}\``).join(", ")}: when absent, every condition on a field under it is false, negated ones included.`,
      ""
    )
  }
  return lines
}

const entitySection = (ast: AST.AST): Array<string> => {
  const name = identifierOf(ast)!
  const lines = [`### ${name}`, ""]
  const description = descriptionOf(ast)
  if (description !== undefined) lines.push(description, "")
  const struct = structOf(ast)
  if (struct === undefined) {
    const members = AST.isUnion(ast) ? ast.types : [ast]
    lines.push(`One of: ${members.map((member) => typeName(member)).join(", ")}.`, "")
    return lines
  }
  lines.push("| field | type | required | notes |", "|---|---|---|---|", ...fieldRows(struct), "")
  if (struct.indexSignatures.length > 0) lines.push("Open: fields not listed here pass through unchanged.", "")
  return lines
}

const operatorTable = (): Array<string> => [
  "| field type | operators |",
  "|---|---|",
  ...(Object.keys(FilterField.valueOperators) as Array<FilterField.FieldType>).map((type) => {
    const operators = FilterField.operatorsFor(type)
    return `| ${type} | ${operators.length === 0 ? "none (listed, not selectable)" : operators.map((op) => `\`${op}\``).join(", ")} |`
  })
]

/** The full text of `docs/events.md`. @since 0.1.0 */
export const render = (): string => {
  const lines: Array<string> = [
    "# Events",
    "",
    "<!-- Generated from the @waybill/events catalogue by packages/events/scripts/generate-docs.ts. Do not edit by hand: run `npx tsx packages/events/scripts/generate-docs.ts`. A test fails when this file is stale. -->",
    "",
    `The service pushes ${all.length} event types to webhook subscribers. \`@waybill/events\` is the one place that knows them: payload schemas, entity schemas, the delivery envelope, the filter fields per event, the producer rules, the OpenAPI \`webhooks\` section and this page are all derived from it.`,
    "",
    "## Delivery",
    "",
    'Every delivery is an HTTP POST whose JSON body is exactly `{ "id": "evt_…", "type": "<event type>", "createdAt": <epoch seconds>, "payload": {…} }`, with the headers `Content-Type: application/json`, `X-Delivery-Id` (one per event and webhook, constant across the retry: deduplicate on it), `X-Event-Id`, `X-Event-Type`, `X-Delivery-Attempt` (1 or 2) and the webhook\'s authentication (Basic, Bearer, or the HMAC headers `X-Signature-Algorithm`, `X-Signature-Timestamp`, `X-Signature`). Any 2xx within 20 seconds acknowledges it; otherwise it is retried once. Timestamps are epoch seconds, except `*Milliseconds` fields and `callout-action-created`\'s `action.createdAt`.',
    "",
    "Receivers: `Envelope.decodeJson(body)` checks a body against the catalogue; `Deduplicator.make({ capacity })` of `@waybill/signing` drops repeats by `X-Delivery-Id`; `Consumer.calloutCreatedAtMillis` reads a callout action's `createdAt` (below 10^12 it is seconds, × 1000); `Consumer.isTerminalLoss(load)` tells a Perished load (terminal, no follow-up shipment) from a Returned one.",
    "",
    "## Event types",
    "",
    "| # | event type | payload |",
    "|---|---|---|",
    ...all.map(
      (type, index) => `| ${index + 1} | [\`${type}\`](${anchor(type)}) | \`${cell(payloadSignature(type))}\` |`
    ),
    "",
    "## Filters",
    "",
    "A webhook may filter each subscribed event on the fields below (dotted paths into `payload`). Custom properties appear as `<entity>.properties.<propertyId>` on events that deliver the whole entity, typed by the workspace's property definitions: text, number, checkbox, select and date are selectable; multiselect, tags and document are listed with `selectable: false`. `GET /webhooks/filter-fields?event=<type>` serves the full list of a workspace.",
    "",
    ...operatorTable(),
    "",
    "Every field also offers `is_set` / `is_not_set`, except the fields of `order-created`'s optional tour.",
    "",
    "## Events",
    "",
    ...all.flatMap(eventSection),
    "## Entities",
    "",
    "Fields the spec does not show are not typed; every entity except `ReferencedEntity` is open.",
    "",
    ...collectEntities().flatMap(entitySection),
    "## Producer rules",
    "",
    "Plain functions in `Producer`; services call them and publish the result through `EventOutbox`.",
    "",
    "- `tourActionCreated` / `tourCommitEvents`: one `tour-action-created` per action; the commit's status snapshot (`oldStatus`, `newStatus`) only with its first action; carrier-integration internals redacted (`redactTourAction`).",
    "- `calloutActionCreated`: only the modified callouts, each enriched (`enrichCallout`: `currentBid`, `bidCount`, `isWinning`, `suggestedBid`; only `suggestedBid` for secret auctions); `action.payload.dispatchContext` removed; `action.createdAt` = `createdAtMilliseconds`; `tour` reduced to `id` and `properties`, absent for system cancellations.",
    "- `taskEvents`: `task-created` when a task comes to exist, exactly one closing event when it closes (a closed task never changes status again), nothing for reassignments; `applyTemplate` sets `templateId` and `templateKey` only when the template has one; `toReference` keeps `orn`, `type`, `id`.",
    "- `legActionCreated`, `legDeleted`, `returnLoad`, `writeOffLoad`, `disposeLoad` (never on a Lost load), `tourDeleted`, `shipmentDeleted`.",
    "- `redact(type, payload)`: the rules `POST /events` applies after validation (contract §5).",
    "",
    "## Decisions",
    "",
    ...decisions.map((decision) => `- ${decision}`),
    ""
  ]
  return lines.join("\n")
}
