/**
 * The filter builder (contract §5 "Operator console", §6): driven by the event's filter-field
 * catalogue; operators exactly as the catalogue lists them per field; a value control by type;
 * multiselect, tags and document fields listed but disabled; groups that switch between all and
 * any, nest up to 5 levels and hold 50 conditions in all.
 */
import type { FilterField } from "@waybill/filters/FilterField"
import {
  append,
  type ConditionNode,
  conditionCount,
  controlId,
  emptyCondition,
  emptyGroup,
  type FilterNode,
  type GroupNode,
  maxConditions,
  maxDepth,
  replace,
  takesValue,
  withField
} from "./filterModel.js"
import { FieldIssues, type Issues, invalidity } from "./Issues.js"

const operatorLabels: Record<string, string> = {
  equals: "equals",
  not_equals: "does not equal",
  contains: "contains",
  not_contains: "does not contain",
  begins_with: "begins with",
  not_begins_with: "does not begin with",
  ends_with: "ends with",
  not_ends_with: "does not end with",
  gt: "is greater than",
  gte: "is at least",
  lt: "is less than",
  lte: "is at most",
  is_checked: "is checked",
  is_not_checked: "is not checked",
  is: "is",
  is_not: "is not",
  on: "is on",
  not_on: "is not on",
  before: "is before",
  after: "is after",
  on_or_before: "is on or before",
  on_or_after: "is on or after",
  is_set: "is set",
  is_not_set: "is not set"
}

interface Props {
  readonly root: GroupNode
  readonly fields: ReadonlyArray<FilterField>
  readonly path: string
  readonly issues: Issues
  readonly onChange: (root: GroupNode) => void
}

/** The whole filter of one event: its top group. */
export const FilterBuilder = ({ root, fields, path, issues, onChange }: Props) => {
  const total = conditionCount(root)
  const update = (target: number, next: FilterNode | null) => {
    const replaced = replace(root, target, next)
    onChange(replaced !== null && replaced.kind === "group" ? replaced : { ...root, children: [] })
  }
  const add = (target: number, child: FilterNode) => onChange(append(root, target, child) as GroupNode)
  return (
    <div class="filter-builder">
      <Group
        group={root}
        depth={1}
        path={path}
        context={{ fields, issues, full: total >= maxConditions, update, add }}
      />
      <p class="hint">
        {total} of {maxConditions} conditions; groups nest up to {maxDepth} levels.
      </p>
    </div>
  )
}

interface Context {
  readonly fields: ReadonlyArray<FilterField>
  readonly issues: Issues
  readonly full: boolean
  readonly update: (target: number, next: FilterNode | null) => void
  readonly add: (target: number, child: FilterNode) => void
}

const Group = (props: {
  readonly group: GroupNode
  readonly depth: number
  readonly path: string
  readonly context: Context
  readonly onRemove?: () => void
}) => {
  const { group, depth, path, context } = props
  const matchId = controlId(`${path}.match`)
  return (
    <fieldset class={`filter-group depth-${depth}`}>
      <legend>{depth === 1 ? "Deliver only when" : "Group"}</legend>
      <div class="group-head">
        <label for={matchId}>Match</label>
        <select
          id={matchId}
          value={group.match}
          onChange={(event) =>
            context.update(group.key, { ...group, match: event.currentTarget.value === "any" ? "any" : "all" })
          }
        >
          <option value="all">all of these (AND)</option>
          <option value="any">any of these (OR)</option>
        </select>
        {props.onRemove !== undefined && (
          <button type="button" class="link danger" onClick={props.onRemove}>
            Remove group
          </button>
        )}
      </div>
      <FieldIssues issues={context.issues} path={path} />
      <FieldIssues issues={context.issues} path={`${path}.conditions`} />
      <ol class="conditions">
        {group.children.map((child, index) => {
          const childPath = `${path}.conditions.${index}`
          return (
            <li key={child.key}>
              {child.kind === "group" ? (
                <Group
                  group={child}
                  depth={depth + 1}
                  path={childPath}
                  context={context}
                  onRemove={() => context.update(child.key, null)}
                />
              ) : (
                <Condition condition={child} path={childPath} context={context} />
              )}
            </li>
          )
        })}
      </ol>
      <div class="group-actions">
        <button type="button" disabled={context.full} onClick={() => context.add(group.key, emptyCondition())}>
          Add condition
        </button>
        <button
          type="button"
          disabled={context.full || depth >= maxDepth}
          onClick={() => context.add(group.key, { ...emptyGroup(), match: group.match === "all" ? "any" : "all" })}
        >
          Add group
        </button>
      </div>
    </fieldset>
  )
}

const Condition = (props: { readonly condition: ConditionNode; readonly path: string; readonly context: Context }) => {
  const { condition, path, context } = props
  const field = context.fields.find((candidate) => candidate.path === condition.field)
  const set = (next: Partial<ConditionNode>) => context.update(condition.key, { ...condition, ...next })
  const fieldPath = `${path}.field`
  const operatorPath = `${path}.operator`
  const valuePath = `${path}.value`
  return (
    <div class="condition">
      <div class="control">
        <label for={controlId(fieldPath)}>Field</label>
        <select
          id={controlId(fieldPath)}
          value={condition.field}
          {...invalidity(context.issues, fieldPath)}
          onChange={(event) =>
            context.update(
              condition.key,
              withField(
                condition,
                context.fields.find((candidate) => candidate.path === event.currentTarget.value)
              )
            )
          }
        >
          <option value="">Choose a field…</option>
          {context.fields.map((candidate) => (
            <option key={candidate.path} value={candidate.path} disabled={!candidate.selectable}>
              {candidate.path}
              {candidate.selectable ? "" : ` (${candidate.type}: not filterable)`}
            </option>
          ))}
        </select>
        <FieldIssues issues={context.issues} path={fieldPath} />
      </div>
      <div class="control">
        <label for={controlId(operatorPath)}>Operator</label>
        <select
          id={controlId(operatorPath)}
          value={condition.operator}
          disabled={field === undefined}
          {...invalidity(context.issues, operatorPath)}
          onChange={(event) => set({ operator: event.currentTarget.value })}
        >
          {(field?.operators ?? []).map((operator) => (
            <option key={operator} value={operator}>
              {operatorLabels[operator] ?? operator}
            </option>
          ))}
        </select>
        <FieldIssues issues={context.issues} path={operatorPath} />
      </div>
      <div class="control">
        <ValueControl field={field} condition={condition} path={valuePath} context={context} onValue={set} />
        <FieldIssues issues={context.issues} path={valuePath} />
      </div>
      <button
        type="button"
        class="link danger"
        aria-label={`Remove condition ${condition.field || "(no field)"}`}
        onClick={() => context.update(condition.key, null)}
      >
        Remove
      </button>
    </div>
  )
}

const ValueControl = (props: {
  readonly field: FilterField | undefined
  readonly condition: ConditionNode
  readonly path: string
  readonly context: Context
  readonly onValue: (next: Partial<ConditionNode>) => void
}) => {
  const { field, condition, path, context, onValue } = props
  const id = controlId(path)
  const common = { id, ...invalidity(context.issues, path) }
  if (field === undefined || !takesValue(field.type, condition.operator)) {
    return (
      <>
        <span class="label">Value</span>
        <span class="no-value">{field === undefined ? "choose a field first" : "no value needed"}</span>
      </>
    )
  }
  const onInput = (event: Event) => onValue({ value: (event.currentTarget as HTMLInputElement).value })
  switch (field.type) {
    case "select":
      return (
        <>
          <label for={id}>Value</label>
          <select {...common} value={condition.value} onChange={onInput}>
            {(field.options ?? []).map((option) => (
              <option key={option.id} value={option.id}>
                {option.label}
              </option>
            ))}
          </select>
        </>
      )
    case "number":
      return (
        <>
          <label for={id}>Value (number)</label>
          <input {...common} type="number" step="any" value={condition.value} onInput={onInput} />
        </>
      )
    case "date":
      return (
        <>
          <label for={id}>Value (calendar day, Europe/Berlin)</label>
          <input {...common} type="date" value={condition.value} onInput={onInput} />
        </>
      )
    default:
      return (
        <>
          <label for={id}>Value (exact text, case-sensitive)</label>
          <input {...common} type="text" value={condition.value} onInput={onInput} />
        </>
      )
  }
}
