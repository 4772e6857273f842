/**
 * For random filters and payloads, the compiled predicate (both engines) equals a small,
 * obviously-correct reference interpreter: contract §6 read literally, paths walked with
 * `split` and `Object.hasOwn`, Berlin days taken with `Intl` on every evaluation.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Filter from "@waybill/filters/Filter"
import { valueOperators } from "@waybill/filters/FilterField"
import * as fc from "fast-check"

// --- the reference interpreter ---------------------------------------------------------------

interface RefCondition {
  readonly field: string
  readonly operator: string
  readonly value?: string | number
}
interface RefGroup {
  readonly match: "all" | "any"
  readonly conditions: ReadonlyArray<RefCondition | RefGroup>
}

const resolve = (payload: unknown, path: string): unknown => {
  let node = payload
  for (const segment of path.split(".")) {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return undefined
    if (!Object.hasOwn(node, segment)) return undefined
    node = (node as Record<string, unknown>)[segment]
  }
  return node
}

const hasValue = (value: unknown) => value !== undefined && value !== null

const berlin = new Intl.DateTimeFormat("en-CA", {
  timeZone: "Europe/Berlin",
  year: "numeric",
  month: "2-digit",
  day: "2-digit"
})

/** The Berlin calendar day (`YYYY-MM-DD`) of a date-field value, or undefined. */
const berlinDay = (value: unknown): string | undefined => {
  let instant: number
  if (typeof value === "number") {
    instant = value >= 1e12 ? value : value * 1000
  } else if (typeof value === "string") {
    const m =
      /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/.exec(
        value
      )
    if (m === null) return undefined
    const [, y, mo, d, h, mi, s, fraction, offset] = m
    const date = new Date(0)
    date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d))
    if (
      date.getUTCFullYear() !== Number(y) ||
      date.getUTCMonth() !== Number(mo) - 1 ||
      date.getUTCDate() !== Number(d)
    ) {
      return undefined
    }
    if (h !== undefined && (Number(h) > 23 || Number(mi) > 59 || Number(s ?? 0) > 59)) return undefined
    if (h === undefined || offset === undefined) return `${y}-${mo}-${d}`
    let offsetMinutes = 0
    if (offset !== "Z" && offset !== "z") {
      const digits = offset.slice(1).replace(":", "")
      if (digits.length !== 2 && digits.length !== 4) return undefined
      const oh = Number(digits.slice(0, 2))
      const om = Number(digits.slice(2) || "0")
      if (oh > 23 || om > 59) return undefined
      offsetMinutes = (offset.startsWith("-") ? -1 : 1) * (oh * 60 + om)
    }
    date.setUTCHours(Number(h), Number(mi), Number(s ?? 0), Number((fraction ?? "0").slice(0, 3).padEnd(3, "0")))
    instant = date.getTime() - offsetMinutes * 60_000
  } else {
    return undefined
  }
  if (!Number.isFinite(instant) || Math.abs(instant) > 8.64e15) return undefined
  return berlin.format(instant)
}

const positive = (condition: RefCondition, value: unknown): boolean => {
  const operand = condition.value
  const base = condition.operator
    .replace(/^not_/, "")
    .replace(/^is_not$/, "is")
    .replace(/^is_not_/, "is_")
  switch (base) {
    case "equals":
      return typeof operand === "string"
        ? typeof value === "string" && value === operand
        : typeof value === "number" && Number.isFinite(value) && value === operand
    case "contains":
      return typeof value === "string" && value.includes(operand as string)
    case "begins_with":
      return typeof value === "string" && value.startsWith(operand as string)
    case "ends_with":
      return typeof value === "string" && value.endsWith(operand as string)
    case "gt":
      return typeof value === "number" && Number.isFinite(value) && value > (operand as number)
    case "gte":
      return typeof value === "number" && Number.isFinite(value) && value >= (operand as number)
    case "lt":
      return typeof value === "number" && Number.isFinite(value) && value < (operand as number)
    case "lte":
      return typeof value === "number" && Number.isFinite(value) && value <= (operand as number)
    case "is_checked":
      return value === true
    case "is":
      return typeof value === "string" && value === operand
    case "is_set":
      return hasValue(value)
    case "on":
    case "before":
    case "after":
    case "on_or_before":
    case "on_or_after": {
      const day = berlinDay(value)
      if (day === undefined) return false
      const target = operand as string
      return base === "on"
        ? day === target
        : base === "before"
          ? day < target
          : base === "after"
            ? day > target
            : base === "on_or_before"
              ? day <= target
              : day >= target
    }
    default:
      throw new Error(`reference: unknown operator ${condition.operator}`)
  }
}

const negated = (operator: string) => operator.startsWith("not_") || operator.startsWith("is_not")

const referenceCondition = (condition: RefCondition, payload: unknown, roots: ReadonlyArray<string>): boolean => {
  for (const root of roots) {
    if (condition.field.startsWith(`${root}.`) && !hasValue(resolve(payload, root))) return false
  }
  const result = positive(condition, resolve(payload, condition.field))
  return negated(condition.operator) ? !result : result
}

const reference = (group: RefGroup, payload: unknown, roots: ReadonlyArray<string>): boolean => {
  const results = group.conditions.map((item) =>
    "conditions" in item ? reference(item, payload, roots) : referenceCondition(item, payload, roots)
  )
  return group.match === "all" ? results.every(Boolean) : results.some(Boolean)
}

// --- generators ------------------------------------------------------------------------------

const FIELDS = [
  "tour.name",
  "tour.status",
  "tour.properties.n",
  "tour.properties.c",
  "tour.properties.s",
  "tour.properties.d",
  "action.createdAt",
  "tourId",
  "tour.constructor",
  "tour.__proto__",
  "tour.properties.__proto__"
] as const

const ROOTS = ["tour", "action", "tour.properties"] as const

const text = fc.string({ unit: fc.constantFrom("a", "b", "A", " ", "é"), maxLength: 4 })
const dayOperands = [
  "2026-03-28",
  "2026-03-29",
  "2026-03-30",
  "2026-10-24",
  "2026-10-25",
  "2026-10-26",
  "2027-03-27",
  "2027-03-28",
  "2027-10-31",
  "2027-11-01"
]

const condition: fc.Arbitrary<RefCondition> = fc.oneof(
  fc.record({
    field: fc.constantFrom(...FIELDS),
    operator: fc.constantFrom(...valueOperators.text),
    value: text
  }),
  fc.record({
    field: fc.constantFrom(...FIELDS),
    operator: fc.constantFrom("equals", "not_equals", "gt", "gte", "lt", "lte"),
    value: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(0.5, -0, 1e12, 1_806_188_400))
  }),
  fc.record({ field: fc.constantFrom(...FIELDS), operator: fc.constantFrom("is", "is_not"), value: text }),
  fc.record({
    field: fc.constantFrom(...FIELDS),
    operator: fc.constantFrom("on", "not_on", "before", "after", "on_or_before", "on_or_after"),
    value: fc.constantFrom(...dayOperands)
  }),
  fc.record({
    field: fc.constantFrom(...FIELDS),
    operator: fc.constantFrom("is_checked", "is_not_checked", "is_set", "is_not_set")
  })
)

const group: fc.Arbitrary<RefGroup> = fc.letrec<{ group: RefGroup; item: RefCondition | RefGroup }>((tie) => ({
  group: fc.record({
    match: fc.constantFrom("all", "any"),
    conditions: fc.array(tie("item"), { minLength: 1, maxLength: 4 })
  }),
  item: fc.oneof({ maxDepth: 4, depthSize: "small" }, condition, condition, tie("group"))
})).group

/** Instants around the Berlin DST changes of 2026 and 2027, and some others. */
const instant = fc.oneof(
  fc
    .constantFrom(
      Date.parse("2026-03-28T23:00:00Z"),
      Date.parse("2026-03-29T22:00:00Z"),
      Date.parse("2026-10-24T22:00:00Z"),
      Date.parse("2026-10-25T23:00:00Z"),
      Date.parse("2027-03-27T23:00:00Z"),
      Date.parse("2027-03-28T22:00:00Z"),
      Date.parse("2027-10-30T22:00:00Z"),
      Date.parse("2027-10-31T23:00:00Z")
    )
    .chain((edge) => fc.integer({ min: -3 * 3_600_000, max: 3 * 3_600_000 }).map((delta) => edge + delta)),
  fc.integer({ min: Date.parse("2026-01-01T00:00:00Z"), max: Date.parse("2028-01-01T00:00:00Z") })
)

const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, "0")

const isoOf = (ms: number, offsetMinutes: number, style: number): string => {
  const local = new Date(ms + offsetMinutes * 60_000)
  const date = `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`
  const time = `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}`
  const seconds = `:${pad(local.getUTCSeconds())}`
  const fraction = `.${pad(local.getUTCMilliseconds(), 3)}`
  const sign = offsetMinutes < 0 ? "-" : "+"
  const offset = `${sign}${pad(Math.trunc(offsetMinutes / 60))}:${pad(offsetMinutes % 60)}`
  switch (style) {
    case 0:
      return date
    case 1:
      return `${date}T${time}${seconds}Z`.replace("Z", offsetMinutes === 0 ? "Z" : offset)
    case 2:
      return `${date}T${time}${seconds}${fraction}${offset}`
    case 3:
      return `${date} ${time}${offset.replace(":", "")}`
    case 4:
      return `${date}T${time}${seconds}`
    default:
      return `${date}t${time}z`.replace("z", offsetMinutes === 0 ? "z" : offset.slice(0, 3))
  }
}

const dateValue = fc.oneof(
  instant.map((ms) => Math.floor(ms / 1000)),
  instant,
  fc
    .tuple(instant, fc.constantFrom(0, 60, 120, -300, 345, -570, 600), fc.integer({ min: 0, max: 5 }))
    .map(([ms, offset, style]) => isoOf(ms, offset, style)),
  fc.constantFrom("2027-02-30", "2027-03-28T24:00:00Z", "2027-03-28T12:00:00+1", "28.03.2027", "", "2027-03-28T12")
)

const scalar: fc.Arbitrary<unknown> = fc.oneof(
  text,
  fc.constantFrom("ab", "ba", "a"),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e12),
  fc.boolean(),
  fc.constant(null),
  dateValue
)

const KEYS = ["tour", "action", "tourId", "properties", "name", "status", "createdAt", "n", "c", "s", "d"] as const

/** A payload node: a scalar, an array, or an object of one of several kinds (plain, null
 * prototype, with inherited keys, with own `__proto__` / `constructor` keys). */
const node: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { maxDepth: 4, depthSize: "small" },
    scalar,
    fc
      .tuple(
        fc.dictionary(fc.constantFrom(...KEYS), tie("node"), { maxKeys: 6 }),
        fc.constantFrom("plain", "plain", "plain", "bare", "inherit", "ownProto", "ownConstructor"),
        tie("node")
      )
      .map(([entries, kind, extra]) => {
        switch (kind) {
          case "bare":
            return Object.assign(Object.create(null), entries)
          case "inherit":
            // The inherited keys must never count.
            return Object.assign(Object.create({ ...entries, status: "ab", n: 1, d: "2027-03-28" }), { c: extra })
          case "ownProto":
            return Object.defineProperty({ ...entries }, "__proto__", { value: extra, enumerable: true })
          case "ownConstructor":
            return { ...entries, constructor: extra }
          default:
            return entries
        }
      }),
    fc.array(tie("node"), { maxLength: 2 })
  )
})).node

/** Payloads that usually have the catalogue's shape, with random holes and odd values. */
const payload: fc.Arbitrary<unknown> = fc.oneof(
  fc.record(
    {
      tour: fc.oneof(
        fc.record(
          {
            name: scalar,
            status: scalar,
            properties: fc.oneof(
              fc.record({ n: scalar, c: scalar, s: scalar, d: dateValue }, { requiredKeys: [] }),
              node
            )
          },
          { requiredKeys: [] }
        ),
        node
      ),
      action: fc.record({ createdAt: dateValue }, { requiredKeys: [] }),
      tourId: scalar
    },
    { requiredKeys: [] }
  ),
  node
)

const roots = fc.subarray([...ROOTS])

describe("compiled filters equal the reference interpreter", () => {
  for (const engine of ["auto", "closures"] as const) {
    it(`engine ${engine}`, () => {
      let matched = 0
      let runs = 0
      fc.assert(
        fc.property(group, fc.array(payload, { minLength: 1, maxLength: 8 }), roots, (filter, payloads, guarded) => {
          const compiled = Filter.compileFilter(filter as Filter.FilterGroup, { guardedRoots: guarded, engine })
          for (const p of payloads) {
            const expected = reference(filter, p, guarded)
            runs++
            if (expected) matched++
            assert.strictEqual(compiled(p), expected)
          }
        }),
        { numRuns: 3000 }
      )
      // Both outcomes must be common, or the property says little.
      assert.isTrue(matched > runs * 0.1 && matched < runs * 0.9, `${matched} of ${runs} matched`)
    })
  }

  for (const engine of ["auto", "closures"] as const) {
    it(`date conditions, engine ${engine}`, () => {
      const dateCondition = fc.record({
        field: fc.constant("d"),
        operator: fc.constantFrom("on", "not_on", "before", "after", "on_or_before", "on_or_after"),
        value: fc.constantFrom(...dayOperands)
      })
      fc.assert(
        fc.property(dateCondition, fc.array(dateValue, { minLength: 1, maxLength: 10 }), (condition, values) => {
          const filter: RefGroup = { match: "all", conditions: [condition] }
          const compiled = Filter.compileFilter(filter as Filter.FilterGroup, { engine })
          for (const d of values) assert.strictEqual(compiled({ d }), reference(filter, { d }, []), String(d))
        }),
        { numRuns: 3000 }
      )
    })
  }

  it("the reference reads dates as the contract says", () => {
    assert.strictEqual(berlinDay(1_806_188_400), "2027-03-28")
    assert.strictEqual(berlinDay(1_806_188_399_999), "2027-03-27")
    assert.strictEqual(berlinDay("2027-03-27T23:00:00Z"), "2027-03-28")
    assert.strictEqual(berlinDay("2027-03-28T23:59:59"), "2027-03-28")
    assert.strictEqual(berlinDay("2027-10-31T02:30:00+01:00"), "2027-10-31")
    assert.strictEqual(berlinDay("2027-02-30"), undefined)
  })
})
