/**
 * The truth table of docs/filters.md: every operator against no value, null, a value of the
 * wrong type, a matching and a non-matching value, and an absent guarded root. The table is
 * computed here with both engines and compared with the one in the document, so it cannot
 * drift. `WAYBILL_WRITE_DOCS=1 npx vitest run packages/filters` rewrites it after a change.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import * as Filter from "@waybill/filters/Filter"
import { type Operator, valueOperators } from "@waybill/filters/FilterField"

interface Row {
  readonly type: string
  readonly field: string
  readonly operator: Operator
  readonly operand?: string | number
  readonly wrong: unknown
  readonly match?: unknown
  readonly noMatch?: unknown
}

const text = (operator: Operator, operand: string, wrong: unknown, match: string, noMatch: string): Row => ({
  type: "text",
  field: "tour.name",
  operator,
  operand,
  wrong,
  match,
  noMatch
})
const number = (operator: Operator, wrong: unknown, match: number, noMatch: number): Row => ({
  type: "number",
  field: "tour.properties.prop_weight",
  operator,
  operand: 15,
  wrong,
  match,
  noMatch
})
const date = (operator: Operator, wrong: unknown, match: unknown, noMatch: unknown): Row => ({
  type: "date",
  field: "tour.properties.prop_due",
  operator,
  operand: "2027-03-28",
  wrong,
  match,
  noMatch
})

export const rows: ReadonlyArray<Row> = [
  text("equals", "Berlin", 42, "Berlin", "berlin"),
  text("not_equals", "Berlin", 42, "Berlin", "berlin"),
  text("contains", "erl", ["Berlin"], "Berlin", "BERLIN"),
  text("not_contains", "erl", ["Berlin"], "Berlin", "BERLIN"),
  text("begins_with", "Ber", true, "Berlin", " Berlin"),
  text("not_begins_with", "Ber", true, "Berlin", " Berlin"),
  text("ends_with", "lin", { name: "Berlin" }, "Berlin", "Berlin "),
  text("not_ends_with", "lin", { name: "Berlin" }, "Berlin", "Berlin "),
  number("equals", "15", 15, 15.5),
  number("not_equals", "15", 15, 15.5),
  number("gt", "16", 16, 15),
  number("gte", true, 15, 14.99),
  number("lt", [14], 14, 15),
  number("lte", "14", 15, 16),
  {
    type: "checkbox",
    field: "tour.properties.prop_express",
    operator: "is_checked",
    wrong: "true",
    match: true,
    noMatch: false
  },
  {
    type: "checkbox",
    field: "tour.properties.prop_express",
    operator: "is_not_checked",
    wrong: "true",
    match: true,
    noMatch: false
  },
  {
    type: "select",
    field: "tour.properties.prop_region",
    operator: "is",
    operand: "opt_north",
    wrong: ["opt_north"],
    match: "opt_north",
    noMatch: "opt_south"
  },
  {
    type: "select",
    field: "tour.properties.prop_region",
    operator: "is_not",
    operand: "opt_north",
    wrong: ["opt_north"],
    match: "opt_north",
    noMatch: "opt_south"
  },
  // 1806188400 (s) is 2027-03-28T00:00:00+01:00, the first second of the 23-hour day;
  // 1806271200000 (ms) is 2027-03-29T00:00:00+02:00, the first instant after it.
  date("on", true, "2027-03-28T00:30:00+01:00", 1_806_188_399),
  date("not_on", true, "2027-03-28T00:30:00+01:00", 1_806_188_399),
  date("before", "28.03.2027", "2027-03-27", 1_806_188_400),
  date("after", "2027-03-28T25:00", 1_806_271_200_000, "2027-03-28T23:59:59+02:00"),
  date("on_or_before", false, "2027-03-28T21:59:59Z", "2027-03-29"),
  date("on_or_after", "", "2027-03-28", "2027-03-27T22:59:59.999Z"),
  { type: "any", field: "tour.properties.prop_any", operator: "is_set", wrong: 42, match: "" },
  { type: "any", field: "tour.properties.prop_any", operator: "is_not_set", wrong: 42, match: "" }
]

const ABSENT = Symbol("absent")

/** The payload with the field set to `value` (or left out), under an existing tour. */
const payloadWith = (field: string, value: unknown): unknown => {
  const segments = field.split(".")
  const root: Record<string, unknown> = {}
  let node = root
  for (const segment of segments.slice(0, -1)) {
    const child: Record<string, unknown> = {}
    node[segment] = child
    node = child
  }
  if (value !== ABSENT) node[segments[segments.length - 1]!] = value
  return root
}

const conditionOf = (row: Row) =>
  (row.operand === undefined
    ? { field: row.field, operator: row.operator }
    : { field: row.field, operator: row.operator, value: row.operand }) as Filter.Condition

/** Evaluates with both engines, which must agree. */
const evaluate = (row: Row, payload: unknown): boolean => {
  const filter: Filter.FilterGroup = { match: "all", conditions: [conditionOf(row)] }
  const options = { guardedRoots: ["tour"] }
  const generated = Filter.compileFilter(filter, options)(payload)
  const closures = Filter.compileFilter(filter, { ...options, engine: "closures" })(payload)
  assert.strictEqual(generated, closures, `engines disagree on ${row.operator} with ${JSON.stringify(payload)}`)
  return generated
}

interface Outcome {
  readonly absent: boolean
  readonly null: boolean
  readonly wrong: boolean
  readonly match: boolean | undefined
  readonly noMatch: boolean | undefined
  readonly guarded: boolean
}

const outcome = (row: Row): Outcome => ({
  absent: evaluate(row, payloadWith(row.field, ABSENT)),
  null: evaluate(row, payloadWith(row.field, null)),
  wrong: evaluate(row, payloadWith(row.field, row.wrong)),
  match: "match" in row ? evaluate(row, payloadWith(row.field, row.match)) : undefined,
  noMatch: "noMatch" in row ? evaluate(row, payloadWith(row.field, row.noMatch)) : undefined,
  guarded: evaluate(row, {})
})

const code = (value: unknown) => `\`${JSON.stringify(value)}\``
const cell = (value: unknown, result: boolean | undefined) =>
  result === undefined ? "—" : `${code(value)} → ${result ? "**true**" : "false"}`
const flag = (result: boolean) => (result ? "**true**" : "false")

export const render = (): string => {
  const lines = [
    "| type | operator | operand | absent | `null` | wrong type | match case | no-match case | guarded root absent |",
    "|---|---|---|---|---|---|---|---|---|"
  ]
  for (const row of rows) {
    const result = outcome(row)
    lines.push(
      `| ${row.type} | \`${row.operator}\` | ${row.operand === undefined ? "—" : code(row.operand)} | ${flag(
        result.absent
      )} | ${flag(result.null)} | ${cell(row.wrong, result.wrong)} | ${cell(row.match, result.match)} | ${cell(
        row.noMatch,
        result.noMatch
      )} | ${flag(result.guarded)} |`
    )
  }
  return lines.join("\n")
}

const DOC = new URL("../../../docs/filters.md", import.meta.url)
const BEGIN = "<!-- truth-table:begin (generated by packages/filters/test/TruthTable.test.ts) -->"
const END = "<!-- truth-table:end -->"

const negatedOperators: ReadonlySet<Operator> = new Set([
  "not_equals",
  "not_contains",
  "not_begins_with",
  "not_ends_with",
  "is_not",
  "is_not_checked",
  "not_on",
  "is_not_set"
])

describe("truth table", () => {
  it("covers every operator of every field type", () => {
    const covered = new Set(rows.map((row) => `${row.type}:${row.operator}`))
    const expected = [
      ...Object.entries(valueOperators).flatMap(([type, operators]) => operators.map((op) => `${type}:${op}`)),
      "any:is_set",
      "any:is_not_set"
    ]
    assert.deepStrictEqual([...covered].sort(), [...expected].sort())
  })

  it("follows the no-value, negation, strict-type and guarded-root rules", () => {
    for (const row of rows) {
      const result = outcome(row)
      const negated = negatedOperators.has(row.operator)
      const label = row.operator
      // No value: negated operators match, every other one does not.
      assert.strictEqual(result.absent, negated, `${label} absent`)
      assert.strictEqual(result.null, negated, `${label} null`)
      // A wrong type is a value that does not match; presence operators see only presence.
      const presence = row.operator === "is_set" || row.operator === "is_not_set"
      assert.strictEqual(result.wrong, presence ? !negated : negated, `${label} wrong type`)
      if (result.match !== undefined) assert.strictEqual(result.match, !negated, `${label} match`)
      if (result.noMatch !== undefined) assert.strictEqual(result.noMatch, negated, `${label} no match`)
      // An absent guarded root: false, negated operators included.
      assert.strictEqual(result.guarded, false, `${label} guarded`)
    }
  })

  it("is the table in docs/filters.md", () => {
    const document = readFileSync(DOC, "utf8")
    const begin = document.indexOf(BEGIN)
    const end = document.indexOf(END)
    assert.isTrue(begin >= 0 && end > begin, "docs/filters.md has no truth-table markers")
    const table = render()
    if (process.env.WAYBILL_WRITE_DOCS === "1") {
      writeFileSync(DOC, `${document.slice(0, begin + BEGIN.length)}\n${table}\n${document.slice(end)}`)
      return
    }
    assert.strictEqual(
      document.slice(begin + BEGIN.length, end).trim(),
      table,
      "the truth table in docs/filters.md is out of date: run WAYBILL_WRITE_DOCS=1 npx vitest run packages/filters"
    )
  })
})
