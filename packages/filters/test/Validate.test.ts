import { assert, describe, it } from "@effect/vitest"
import * as Issue from "@waybill/core/Issue"
import * as Filter from "@waybill/filters/Filter"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { orderFields, tourFields } from "./fixtures.js"

const issuesOf = (input: unknown, fields = tourFields): ReadonlyArray<Issue.Issue> => {
  const result = Filter.validateFilter(input, fields)
  assert.isTrue(Either.isLeft(result), "expected the filter to be refused")
  return Either.isLeft(result) ? result.left : []
}
const pathsOf = (input: unknown, fields = tourFields) => issuesOf(input, fields).map((issue) => issue.path)
const accepted = (input: unknown, fields = tourFields): Filter.FilterGroup => {
  const result = Filter.validateFilter(input, fields)
  if (Either.isLeft(result)) assert.fail(JSON.stringify(result.left))
  return Either.getOrThrow(result)
}
const one = (condition: unknown) => ({ conditions: [condition] })

/** A group nested `levels` deep (the top group is level 1) with one condition at the bottom. */
const nested = (levels: number): unknown => {
  let group: unknown = one({ field: "tour.status", operator: "equals", value: "completed" })
  for (let level = 1; level < levels; level++) group = { match: "any", conditions: [group] }
  return group
}

describe("validateFilter", () => {
  it("accepts a valid filter and fills in match at every level", () => {
    const input = {
      conditions: [
        { field: "tour.status", operator: "equals", value: "completed" },
        {
          match: "any",
          conditions: [
            { field: "tour.properties.prop_region", operator: "is", value: "opt_north" },
            { field: "tour.properties.prop_weight", operator: "gt", value: 1000 },
            { conditions: [{ field: "tour.properties.prop_express", operator: "is_checked" }] }
          ]
        },
        { field: "tour.properties.prop_due", operator: "on_or_after", value: "2027-03-28" },
        { field: "tour.properties.prop_note", operator: "is_not_set" }
      ]
    }
    assert.deepStrictEqual(accepted(input), {
      match: "all",
      conditions: [
        { field: "tour.status", operator: "equals", value: "completed" },
        {
          match: "any",
          conditions: [
            { field: "tour.properties.prop_region", operator: "is", value: "opt_north" },
            { field: "tour.properties.prop_weight", operator: "gt", value: 1000 },
            { match: "all", conditions: [{ field: "tour.properties.prop_express", operator: "is_checked" }] }
          ]
        },
        { field: "tour.properties.prop_due", operator: "on_or_after", value: "2027-03-28" },
        { field: "tour.properties.prop_note", operator: "is_not_set" }
      ]
    })
  })

  it("reports every problem at once, each with its path inside the filter", () => {
    const issues = issuesOf({
      match: "every",
      conditions: [
        { field: "tour.colour", operator: "equals", value: "red" },
        {
          match: "any",
          conditions: [
            { field: "tour.properties.prop_weight", operator: "gt", value: "1000" },
            { field: "tour.properties.prop_region", operator: "is", value: "opt_west" },
            { conditions: [] }
          ]
        },
        { field: "tour.properties.prop_tags", operator: "is_set" },
        { field: "tour.name", operator: "gt", value: 5 },
        { field: "tour.properties.prop_due", operator: "on", value: "2027-02-30" },
        { field: "tour.status", operator: "contains", value: "" },
        { field: "tour.properties.prop_express", operator: "is_checked", value: true },
        "tour.status = done"
      ]
    })
    assert.deepStrictEqual(issues, [
      { path: "match", message: 'must be "all" or "any"' },
      { path: "conditions.0.field", message: 'unknown field "tour.colour" for this event' },
      { path: "conditions.1.conditions.0.value", message: "must be a finite number, not a string" },
      {
        path: "conditions.1.conditions.1.value",
        message: '"opt_west" is not an option of "tour.properties.prop_region"; options: opt_north, opt_south'
      },
      {
        path: "conditions.1.conditions.2.conditions",
        message: "must not be empty: a group needs at least one condition"
      },
      { path: "conditions.2.field", message: 'field "tour.properties.prop_tags" (tags) cannot be used in a filter' },
      {
        path: "conditions.3.operator",
        message:
          'gt is not allowed on text field "tour.name"; allowed: equals, not_equals, contains, not_contains, begins_with, not_begins_with, ends_with, not_ends_with, is_set, is_not_set'
      },
      { path: "conditions.4.value", message: "must be a calendar date YYYY-MM-DD" },
      { path: "conditions.5.value", message: "must be a non-empty string" },
      { path: "conditions.6.value", message: "must be omitted: is_checked takes no value" },
      {
        path: "conditions.7",
        message: "must be a condition { field, operator, value } or a group { match, conditions }, not a string"
      }
    ])
    // The HTTP layer places them under the event's filter.
    assert.strictEqual(
      Issue.prefix(issues, "filters.tour-created")[2]!.path,
      "filters.tour-created.conditions.1.conditions.0.value"
    )
  })

  describe("groups", () => {
    it("must be objects with a non-empty conditions array", () => {
      for (const input of [null, [], "all", 42, undefined]) assert.deepStrictEqual(pathsOf(input), [""])
      assert.deepStrictEqual(pathsOf({}), ["conditions"])
      assert.deepStrictEqual(pathsOf({ conditions: {} }), ["conditions"])
      assert.deepStrictEqual(pathsOf({ conditions: [] }), ["conditions"])
      assert.deepStrictEqual(pathsOf({ match: "any", conditions: [{ match: "all", conditions: [] }] }), [
        "conditions.0.conditions"
      ])
    })

    it("combine with all or any, nothing else", () => {
      assert.deepStrictEqual(pathsOf({ match: "AND", conditions: nested(1) && [] }), ["match", "conditions"])
      assert.deepStrictEqual(pathsOf({ match: null, ...(nested(1) as object) }), ["match"])
      assert.strictEqual(accepted({ match: "any", ...(nested(1) as object) }).match, "any")
    })

    it("nest at most 5 levels deep", () => {
      accepted(nested(5))
      assert.deepStrictEqual(issuesOf(nested(6)), [
        {
          path: "conditions.0.conditions.0.conditions.0.conditions.0.conditions.0",
          message: "groups nest at most 5 levels deep (the top group is level 1)"
        }
      ])
    })

    it("are counted before anything descends further: 100,000 levels are the same one issue", () => {
      assert.deepStrictEqual(pathsOf(nested(100_000)), [
        "conditions.0.conditions.0.conditions.0.conditions.0.conditions.0"
      ])
      const arrays = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`)
      assert.deepStrictEqual(pathsOf(one({ field: "tour.status", operator: "equals", value: arrays, extra: arrays })), [
        "conditions.0.extra",
        "conditions.0.value"
      ])
    })

    it("hold at most 50 conditions in all", () => {
      const condition = { field: "tour.status", operator: "equals", value: "x" }
      const spread = (count: number) => ({
        conditions: [
          { match: "any", conditions: Array.from({ length: count - 25 }, () => condition) },
          ...Array.from({ length: 25 }, () => condition)
        ]
      })
      accepted(spread(50))
      assert.deepStrictEqual(issuesOf(spread(51)), [
        { path: "", message: "a filter holds at most 50 conditions, found 51" }
      ])
    })

    it("refuse unknown keys, so a typo cannot change the meaning silently", () => {
      assert.deepStrictEqual(
        issuesOf({ mach: "any", conditions: [{ field: "tour.status", operator: "equals", vale: "x", value: "y" }] }),
        [
          { path: "mach", message: "is not allowed; a group has only match and conditions" },
          { path: "conditions.0.vale", message: "is not allowed; a condition has only field, operator and value" }
        ]
      )
    })
  })

  describe("fields and operators", () => {
    it("refuse unknown and unselectable fields", () => {
      assert.deepStrictEqual(
        issuesOf({
          conditions: [
            { field: "tour.properties.prop_multi", operator: "is_set" },
            { field: "tour.properties.prop_doc", operator: "is_not_set" },
            { field: "callouts.currentBid", operator: "gt", value: 1 },
            { field: 42, operator: "is_set" },
            { operator: "is_set" }
          ]
        }).map((issue) => [issue.path, issue.message]),
        [
          ["conditions.0.field", 'field "tour.properties.prop_multi" (multiselect) cannot be used in a filter'],
          ["conditions.1.field", 'field "tour.properties.prop_doc" (document) cannot be used in a filter'],
          ["conditions.2.field", 'unknown field "callouts.currentBid" for this event'],
          ["conditions.3.field", "must be a field path (a string) from the event's filter fields"],
          ["conditions.4.field", "must be a field path (a string) from the event's filter fields"]
        ]
      )
    })

    it("refuse operators the field does not offer", () => {
      assert.deepStrictEqual(pathsOf(one({ field: "tour.status", operator: "is", value: "x" })), [
        "conditions.0.operator"
      ])
      assert.deepStrictEqual(pathsOf(one({ field: "tour.properties.prop_weight", operator: "contains", value: "1" })), [
        "conditions.0.operator"
      ])
      assert.deepStrictEqual(pathsOf(one({ field: "tour.properties.prop_express", operator: "equals", value: "x" })), [
        "conditions.0.operator"
      ])
      assert.deepStrictEqual(issuesOf(one({ field: "tour.status", operator: "matches", value: "x" })), [
        {
          path: "conditions.0.operator",
          message:
            '"matches" is not an operator of text field "tour.status"; allowed: equals, not_equals, contains, not_contains, begins_with, not_begins_with, ends_with, not_ends_with, is_set, is_not_set'
        }
      ])
      assert.deepStrictEqual(issuesOf(one({ field: "tour.status" })), [
        { path: "conditions.0.operator", message: "is required" }
      ])
    })

    it("refuse is_set and is_not_set on order-created's optional tour", () => {
      accepted(one({ field: "order.id", operator: "is_set" }), orderFields)
      accepted(one({ field: "tour.id", operator: "not_equals", value: "tour_1" }), orderFields)
      assert.deepStrictEqual(
        issuesOf(
          {
            conditions: [
              { field: "tour.id", operator: "is_set" },
              { field: "tour.properties.prop_weight", operator: "is_not_set" }
            ]
          },
          orderFields
        ),
        [
          {
            path: "conditions.0.operator",
            message:
              'is_set is not allowed on text field "tour.id"; allowed: equals, not_equals, contains, not_contains, begins_with, not_begins_with, ends_with, not_ends_with'
          },
          {
            path: "conditions.1.operator",
            message:
              'is_not_set is not allowed on number field "tour.properties.prop_weight"; allowed: equals, not_equals, gt, gte, lt, lte'
          }
        ]
      )
    })

    it("check the operand against the operator when the field itself is unusable", () => {
      assert.deepStrictEqual(pathsOf(one({ field: "nope", operator: "gt", value: "5" })), [
        "conditions.0.field",
        "conditions.0.value"
      ])
      assert.deepStrictEqual(pathsOf(one({ field: "nope", operator: "is_set", value: 1 })), [
        "conditions.0.field",
        "conditions.0.value"
      ])
      assert.deepStrictEqual(pathsOf(one({ field: "tour.name", operator: "on", value: "tomorrow" })), [
        "conditions.0.operator",
        "conditions.0.value"
      ])
    })
  })

  describe("operands", () => {
    const cases: ReadonlyArray<readonly [string, string, unknown, string | undefined]> = [
      ["tour.status", "equals", "completed", undefined],
      ["tour.status", "equals", "", "must be a non-empty string"],
      ["tour.status", "equals", 5, "must be a non-empty string, not a number"],
      ["tour.status", "begins_with", undefined, "is required"],
      ["tour.status", "not_contains", ["a"], "must be a non-empty string, not an array"],
      ["tour.status", "ends_with", " ", undefined],
      ["tour.properties.prop_weight", "equals", 0, undefined],
      ["tour.properties.prop_weight", "lte", -12.5, undefined],
      ["tour.properties.prop_weight", "equals", "15", "must be a finite number, not a string"],
      ["tour.properties.prop_weight", "gt", Number.NaN, "must be a finite number, not NaN"],
      ["tour.properties.prop_weight", "lt", Number.POSITIVE_INFINITY, "must be a finite number, not Infinity"],
      ["tour.properties.prop_weight", "gte", null, "must be a finite number, not null"],
      ["tour.properties.prop_weight", "gte", undefined, "is required"],
      ["tour.properties.prop_express", "is_not_checked", undefined, undefined],
      ["tour.properties.prop_express", "is_checked", false, "must be omitted: is_checked takes no value"],
      ["tour.properties.prop_region", "is_not", "opt_south", undefined],
      [
        "tour.properties.prop_region",
        "is",
        "North",
        '"North" is not an option of "tour.properties.prop_region"; options: opt_north, opt_south'
      ],
      ["tour.properties.prop_region", "is", 1, "must be an option id (a string), not a number"],
      [
        "tour.properties.prop_empty_select",
        "is",
        "opt_north",
        '"opt_north" is not an option of "tour.properties.prop_empty_select", which has no options'
      ],
      ["tour.properties.prop_due", "before", "2028-02-29", undefined],
      ["tour.properties.prop_due", "before", "2027-02-29", "must be a calendar date YYYY-MM-DD"],
      ["tour.properties.prop_due", "after", "2027-3-1", "must be a calendar date YYYY-MM-DD"],
      ["tour.properties.prop_due", "on", "2027-03-28T00:00:00Z", "must be a calendar date YYYY-MM-DD"],
      ["tour.properties.prop_due", "not_on", 1_806_188_400, "must be a calendar date YYYY-MM-DD"],
      ["tour.triggerAt", "on_or_before", "2027-10-31", undefined],
      ["tour.status", "is_set", undefined, undefined],
      ["tour.status", "is_not_set", null, "must be omitted: is_not_set takes no value"]
    ]
    for (const [field, operator, value, problem] of cases) {
      it(`${operator} on ${field} with ${String(JSON.stringify(value))}: ${problem ?? "accepted"}`, () => {
        const condition = value === undefined ? { field, operator } : { field, operator, value }
        const result = Filter.validateFilter(one(condition), tourFields)
        if (problem === undefined) assert.isTrue(Either.isRight(result), JSON.stringify(result))
        else assert.deepStrictEqual(issuesOf(one(condition)), [{ path: "conditions.0.value", message: problem }])
      })
    }
  })

  describe("hostile input", () => {
    it("stops at the depth limit, however deep the input", () => {
      let deep: unknown = one({ field: "tour.status", operator: "is_set" })
      for (let i = 0; i < 100_000; i++) deep = { conditions: [deep] }
      assert.deepStrictEqual(pathsOf(deep), ["conditions.0.conditions.0.conditions.0.conditions.0.conditions.0"])
    })

    it("survives cycles and throwing getters", () => {
      const cyclic: { conditions: Array<unknown> } = { conditions: [] }
      cyclic.conditions.push(cyclic)
      assert.isTrue(pathsOf(cyclic).length > 0)
      const throwing = {
        get conditions(): never {
          throw new Error("boom")
        }
      }
      assert.deepStrictEqual(issuesOf(throwing), [{ path: "", message: "could not be read" }])
    })

    it("ignores a polluted Object.prototype", () => {
      const prototype = Object.prototype as Record<string, unknown>
      prototype.match = "any"
      try {
        assert.strictEqual(accepted(nested(1)).match, "all")
        assert.deepStrictEqual(pathsOf({}), ["conditions"])
      } finally {
        delete prototype.match
      }
    })
  })

  it("accepts only what the schema decodes, and compiles everything it accepts", () => {
    const condition = fc.oneof(
      fc.record({
        field: fc.constantFrom("tour.status", "tour.name"),
        operator: fc.constantFrom("equals", "contains", "not_ends_with"),
        value: fc.string()
      }),
      fc.record({
        field: fc.constant("tour.properties.prop_weight"),
        operator: fc.constantFrom("equals", "gt", "lte"),
        value: fc.oneof(fc.double(), fc.string())
      }),
      fc.record({
        field: fc.constant("tour.properties.prop_region"),
        operator: fc.constantFrom("is", "is_not"),
        value: fc.constantFrom("opt_north", "opt_x", "")
      }),
      fc.record({
        field: fc.constant("tour.properties.prop_due"),
        operator: fc.constantFrom("on", "before"),
        value: fc.constantFrom("2027-03-28", "2027-02-29", "x")
      }),
      fc.record({
        field: fc.constantFrom("tour.properties.prop_express", "tour.properties.prop_tags"),
        operator: fc.constantFrom("is_checked", "is_set")
      })
    )
    const { group } = fc.letrec<{ group: unknown; item: unknown }>((tie) => ({
      group: fc.record(
        { match: fc.constantFrom("all", "any"), conditions: fc.array(tie("item"), { minLength: 0, maxLength: 4 }) },
        { requiredKeys: ["conditions"] }
      ),
      item: fc.oneof({ depthSize: "small", withCrossShrink: true }, condition, tie("group"))
    }))
    let acceptedCount = 0
    fc.assert(
      fc.property(group, (input) => {
        const result = Filter.validateFilter(input, tourFields)
        if (Either.isRight(result)) acceptedCount++
        const decoded = Schema.decodeUnknownEither(Filter.FilterGroup)(input)
        if (Either.isRight(result)) {
          assert.isTrue(Either.isRight(decoded))
          assert.deepStrictEqual(result.right, Either.getOrThrow(decoded))
          assert.isTrue(Either.isRight(Filter.compileFilterEither(result.right)))
        } else {
          assert.isTrue(result.left.length > 0)
        }
      }),
      { numRuns: 500 }
    )
    // Both outcomes must really be exercised.
    assert.isTrue(acceptedCount > 25 && acceptedCount < 475, `accepted ${acceptedCount} of 500`)
  })
})
