/**
 * Tour names from a master's name template: `{{ weekday }}` (English name) and `{{ date }}`
 * (`YYYY-MM-DD`) of the trigger's local date; spaces inside the braces are optional.
 * @since 0.1.0
 */
import * as Issue from "@waybill/core/Issue"
import * as WallClock from "./WallClock.js"

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g

/** The placeholders a name may use. @since 0.1.0 */
export const placeholders: ReadonlyArray<string> = ["weekday", "date"]

/** One issue per unknown `{{ … }}` placeholder, at path `""` (callers prefix `name`). @since 0.1.0 */
export const validate = (template: string): Array<Issue.Issue> =>
  Array.from(template.matchAll(PLACEHOLDER))
    .filter((match) => !placeholders.includes(match[1]!))
    .map((match) =>
      Issue.make("", `uses the unknown placeholder ${match[0]}; only {{ weekday }} and {{ date }} are allowed`)
    )

/** Renders a template for a trigger's local date; `null` and unknown placeholders stay as they are. @since 0.1.0 */
export const render = (template: string | null, date: WallClock.LocalDate): string | null => {
  if (template === null) return null
  if (!template.includes("{{")) return template
  const weekday = WallClock.weekdayName(WallClock.weekdayOf(date))
  return template.replace(PLACEHOLDER, (whole, name: string) =>
    name === "weekday" ? weekday : name === "date" ? date : whole
  )
}
