/**
 * The API's 400 issues, shown at the control whose path they name (contract §5), and a summary
 * of all of them at the top of a form.
 */
import type { Issue } from "@waybill/core/Issue"
import type { ComponentChildren, Ref } from "preact"
import { controlId } from "./filterModel.js"

export type Issues = ReadonlyArray<Issue>

const errorId = (path: string) => `${controlId(path)}-error`

/** Props that tie a control to its issues: `aria-invalid` and `aria-describedby`. */
export const invalidity = (issues: Issues, path: string) =>
  issues.some((issue) => issue.path === path)
    ? { "aria-invalid": true as const, "aria-describedby": errorId(path) }
    : {}

/** The messages of the issues at exactly this path, under its control. */
export const FieldIssues = ({ issues, path }: { readonly issues: Issues; readonly path: string }) => {
  const here = issues.filter((issue) => issue.path === path)
  if (here.length === 0) return null
  return (
    <p class="field-error" id={errorId(path)}>
      {here.map((issue) => issue.message).join("; ")}
    </p>
  )
}

/** The props of the field at `path`: its id (for its label and the summary's links) and its invalidity. */
export const fieldAt = (issues: Issues, path: string) => ({ id: controlId(path), ...invalidity(issues, path) })

/**
 * A labelled control: its field (`children`, spread with `fieldAt`), then the issues at `paths`
 * (by default its own path) and an optional hint.
 */
export const Control = ({
  issues,
  path,
  label,
  paths = [path],
  hint,
  children
}: {
  readonly issues: Issues
  readonly path: string
  readonly label: ComponentChildren
  readonly paths?: ReadonlyArray<string>
  readonly hint?: ComponentChildren
  readonly children: ComponentChildren
}) => (
  <div class="control">
    <label for={controlId(path)}>{label}</label>
    {children}
    {paths.map((shown) => (
      <FieldIssues key={shown} issues={issues} path={shown} />
    ))}
    {hint !== undefined && <p class="hint">{hint}</p>}
  </div>
)

/**
 * A labelled text input at `path` (see `Control`) that hands each edit's value to `onValue`.
 * `type` is spelled as one props member per input type because Preact types an input's
 * attributes by its literal `type`: a union-typed `type` is refused.
 */
export const InputControl = ({
  issues,
  path,
  label,
  paths = [path],
  hint,
  inputRef = null,
  onValue,
  ...input
}: {
  readonly issues: Issues
  readonly path: string
  readonly label: ComponentChildren
  readonly paths?: ReadonlyArray<string>
  readonly hint?: ComponentChildren
  readonly value: string
  readonly autoComplete?: string
  readonly inputMode?: "numeric"
  readonly placeholder?: string
  readonly inputRef?: Ref<HTMLInputElement>
  readonly onValue: (value: string) => void
} & ({ readonly type: "text" } | { readonly type: "url" } | { readonly type: "password" })) => (
  <Control issues={issues} path={path} label={label} paths={paths} hint={hint}>
    <input {...fieldAt(issues, path)} {...input} ref={inputRef} onInput={(e) => onValue(e.currentTarget.value)} />
  </Control>
)

/**
 * A labelled choice at `path` (see `Control`) among `options`, handing the chosen value to
 * `onValue` (a select offers only its options' values).
 */
export const SelectControl = <Value extends string>({
  issues,
  path,
  label,
  paths = [path],
  hint,
  value,
  options,
  onValue
}: {
  readonly issues: Issues
  readonly path: string
  readonly label: ComponentChildren
  readonly paths?: ReadonlyArray<string>
  readonly hint?: ComponentChildren
  readonly value: Value
  readonly options: ReadonlyArray<{ readonly value: Value; readonly label: string }>
  readonly onValue: (value: Value) => void
}) => (
  <Control issues={issues} path={path} label={label} paths={paths} hint={hint}>
    <select {...fieldAt(issues, path)} value={value} onChange={(e) => onValue(e.currentTarget.value as Value)}>
      {options.map((option) => (
        <option key={option.value} value={option.value}>
          {option.label}
        </option>
      ))}
    </select>
  </Control>
)

/** Every issue of a refused request, each linking to its control when the form shows one. */
export const IssueSummary = ({ message, issues }: { readonly message: string; readonly issues: Issues }) => (
  <div class="issue-summary" role="alert" tabIndex={-1}>
    <p>{message}</p>
    {issues.length > 0 && (
      <ul>
        {issues.map((issue) => (
          <li key={`${issue.path}:${issue.message}`}>
            <a href={`#${controlId(issue.path)}`} onClick={(event) => focusControl(event, issue.path)}>
              {issue.path === "" ? "the request" : issue.path}
            </a>
            : {issue.message}
          </li>
        ))}
      </ul>
    )}
  </div>
)

// Moves focus to the control instead of changing the hash (the hash is the page's route).
const focusControl = (event: Event, path: string) => {
  event.preventDefault()
  document.getElementById(controlId(path))?.focus()
}
