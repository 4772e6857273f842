import { assert, describe, it } from "@effect/vitest"
import * as Filter from "@waybill/filters/Filter"
import * as Either from "effect/Either"
import { withTimeZone } from "./timeZone.js"

type Engine = "auto" | "closures"
const engines: ReadonlyArray<Engine> = ["auto", "closures"]

const show = (value: unknown): string => {
  try {
    return String(JSON.stringify(value))
  } catch {
    return String(typeof value)
  }
}

/** Compiles with both engines; the returned predicate asserts that they agree on every call. */
const compile = (filter: unknown, guardedRoots: ReadonlyArray<string> = []) => {
  const generated = Filter.compileFilter(filter as Filter.FilterGroup, { guardedRoots })
  const closures = Filter.compileFilter(filter as Filter.FilterGroup, { guardedRoots, engine: "closures" })
  return (payload: unknown): boolean => {
    const result = generated(payload)
    assert.strictEqual(closures(payload), result, `engines disagree on ${show(payload)}`)
    return result
  }
}
const condition = (field: string, operator: string, value?: unknown) =>
  compile({ match: "all", conditions: [value === undefined ? { field, operator } : { field, operator, value }] })

describe("compileFilter", () => {
  describe("text", () => {
    it("is literal and case-sensitive: no trimming, no Unicode normalisation", () => {
      const equals = condition("tour.name", "equals", "Café")
      assert.isTrue(equals({ tour: { name: "Café" } }))
      assert.isFalse(equals({ tour: { name: "café" } }))
      assert.isFalse(equals({ tour: { name: "Café " } }))
      assert.isFalse(equals({ tour: { name: "Cafe\u0301" } }))
      const contains = condition("tour.name", "contains", ".*")
      assert.isFalse(contains({ tour: { name: "anything" } }))
      assert.isTrue(contains({ tour: { name: "a.*b" } }))
      const begins = condition("tour.name", "begins_with", "\uD83D")
      assert.isTrue(begins({ tour: { name: "\uD83D\uDE9A truck" } }))
    })

    it("binds operands that look like code as plain strings", () => {
      for (const operand of ['"); return true; ("', "\\", "\u2028\u2029", "$" + "{1}", "`", "</script>", "\u0000"]) {
        const equals = condition("tour.name", "equals", operand)
        assert.isTrue(equals({ tour: { name: operand } }), JSON.stringify(operand))
        assert.isFalse(equals({ tour: { name: "x" } }), JSON.stringify(operand))
      }
      // Segments that would collide if paths were joined with a separator stay distinct.
      const split = compile({
        match: "all",
        conditions: [
          { field: "a\u0000b.c", operator: "equals", value: 1 },
          { field: "a.b.c", operator: "equals", value: 2 }
        ]
      })
      assert.isTrue(split({ "a\u0000b": { c: 1 }, a: { b: { c: 2 } } }))
      assert.isFalse(split({ "a\u0000b": { c: 2 }, a: { b: { c: 2 } } }))
      const key = 'a"]; return true; //'
      const weird = condition(`tour.properties.${key}`, "is_set")
      assert.isFalse(weird({ tour: { properties: {} } }))
      assert.isTrue(weird({ tour: { properties: { [key]: 1 } } }))
    })
  })

  describe("numbers", () => {
    it("compare finite numbers only", () => {
      const equals = condition("n", "equals", 0)
      assert.isTrue(equals({ n: -0 }))
      assert.isFalse(equals({ n: "0" }))
      const gt = condition("n", "gt", 10)
      const notEquals = condition("n", "not_equals", 10)
      const lte = condition("n", "lte", 10)
      assert.isFalse(gt({ n: Number.POSITIVE_INFINITY }))
      assert.isFalse(gt({ n: Number.NaN }))
      assert.isFalse(lte({ n: Number.NEGATIVE_INFINITY }))
      assert.isTrue(notEquals({ n: Number.NaN }))
      assert.isFalse(gt({ n: "11" }))
      assert.isFalse(gt({ n: 11n }))
      assert.isTrue(gt({ n: 10.000001 }))
      assert.isTrue(lte({ n: -1e308 }))
    })
  })

  describe("paths", () => {
    it("follow own properties only", () => {
      const status = condition("tour.status", "equals", "completed")
      const notStatus = condition("tour.status", "not_equals", "completed")
      const isSet = condition("tour.status", "is_set")
      const inherited = { tour: Object.create({ status: "completed" }) }
      assert.isFalse(status(inherited))
      assert.isTrue(notStatus(inherited))
      assert.isFalse(isSet(inherited))
      for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
        assert.isFalse(condition(`tour.${name}`, "is_set")({ tour: {} }), name)
        assert.isTrue(condition(`tour.${name}`, "is_not_set")({ tour: {} }), name)
      }
      assert.isFalse(condition("tour.__proto__.status", "is_set")({ tour: { status: "x" } }))
      // A JSON body can carry an own "__proto__" key: it is then a value like any other.
      const own = JSON.parse('{ "tour": { "__proto__": { "status": "completed" } } }')
      assert.isTrue(condition("tour.__proto__.status", "equals", "completed")(own))
      assert.isFalse(status(own))
    })

    it("ignore a polluted Object.prototype", () => {
      const prototype = Object.prototype as Record<string, unknown>
      const status = condition("tour.status", "equals", "completed")
      const isNotSet = condition("tour.status", "is_not_set")
      const region = condition("tour.properties.region", "equals", "north")
      try {
        prototype.status = "completed"
        prototype.properties = { region: "north" }
        assert.isFalse(status({ tour: {} }))
        assert.isTrue(isNotSet({ tour: {} }))
        assert.isFalse(region({ tour: {} }))
        assert.isTrue(status({ tour: { status: "completed" } }))
        assert.isTrue(region({ tour: { properties: { region: "north" } } }))
        prototype.tour = { status: "completed" }
        assert.isFalse(status({}))
      } finally {
        delete prototype.status
        delete prototype.properties
        delete prototype.tour
      }
      assert.isTrue(status({ tour: { status: "completed" } }))
    })

    it("walk null-prototype objects and class instances by their own fields", () => {
      const status = condition("tour.status", "equals", "completed")
      const bare = Object.assign(Object.create(null), { status: "completed" })
      assert.isTrue(status({ tour: bare }))
      class Tour {
        constructor(readonly status: string) {}
        get name() {
          return "from the prototype"
        }
      }
      assert.isTrue(status({ tour: new Tour("completed") }))
      assert.isFalse(condition("tour.name", "is_set")({ tour: new Tour("completed") }))
    })

    it("never walk into arrays; an array at the field is a value of the wrong type", () => {
      const first = condition("tour.0", "is_set")
      const length = condition("tour.length", "is_set")
      const nested = condition("tours.status", "not_equals", "x")
      assert.isFalse(first({ tour: ["a"] }))
      assert.isFalse(length({ tour: ["a"] }))
      assert.isTrue(nested({ tours: [{ status: "x" }] }))
      const status = condition("tour.status", "equals", "completed")
      const notStatus = condition("tour.status", "not_equals", "completed")
      assert.isFalse(status({ tour: { status: ["completed"] } }))
      assert.isTrue(notStatus({ tour: { status: ["completed"] } }))
      assert.isTrue(condition("tour.status", "is_set")({ tour: { status: [] } }))
    })

    it("treat anything that is not an object along the path as no value", () => {
      const notStatus = condition("tour.status", "not_equals", "x")
      const status = condition("tour.status", "contains", "x")
      for (const payload of [
        null,
        undefined,
        42,
        "tour",
        true,
        { tour: null },
        { tour: "x" },
        { tour: 1 },
        { tour: () => 1 },
        []
      ]) {
        assert.isTrue(notStatus(payload), show(payload))
        assert.isFalse(status(payload), show(payload))
      }
    })
  })

  describe("groups", () => {
    it("combine with all by default, any when asked, and nest", () => {
      const filter = compile({
        conditions: [
          { field: "a", operator: "is_checked" },
          {
            match: "any",
            conditions: [
              { field: "b", operator: "equals", value: 1 },
              {
                match: "all",
                conditions: [
                  { field: "c", operator: "is_set" },
                  { field: "d", operator: "is_not_set" }
                ]
              }
            ]
          }
        ]
      })
      assert.isTrue(filter({ a: true, b: 1 }))
      assert.isTrue(filter({ a: true, c: 0 }))
      assert.isFalse(filter({ a: true, c: 0, d: 0 }))
      assert.isFalse(filter({ a: false, b: 1 }))
      assert.isFalse(filter({ a: true }))
    })
  })

  describe("guarded roots", () => {
    // callout-action-created: without a tour, every tour.* condition is false, negated ones too.
    const filters = {
      isNotSet: { field: "tour.properties.prop_region", operator: "is_not_set" },
      isNot: { field: "tour.properties.prop_region", operator: "is_not", value: "opt_north" },
      notEquals: { field: "tour.id", operator: "not_equals", value: "tour_1" },
      isNotChecked: { field: "tour.properties.prop_express", operator: "is_not_checked" },
      notOn: { field: "tour.properties.prop_due", operator: "not_on", value: "2027-03-28" }
    }
    const system = { callouts: [], action: { payload: { type: "cancel" }, createdAt: 1_806_188_400_000 } }

    for (const [name, negated] of Object.entries(filters)) {
      it(`make ${name} false when the root is absent or null, and leave it alone otherwise`, () => {
        const guarded = compile({ match: "all", conditions: [negated] }, ["tour"])
        const unguarded = compile({ match: "all", conditions: [negated] })
        assert.isFalse(guarded(system))
        assert.isFalse(guarded({ ...system, tour: null }))
        assert.isTrue(unguarded(system))
        assert.isTrue(guarded({ ...system, tour: { id: "tour_2", properties: {} } }))
      })
    }

    it("apply only to fields under the root", () => {
      const filter = compile(
        {
          match: "all",
          conditions: [
            { field: "action.payload.type", operator: "not_equals", value: "assign" },
            { field: "tourId", operator: "is_not_set" }
          ]
        },
        ["tour"]
      )
      assert.isTrue(filter(system))
      const nested = compile({ match: "all", conditions: [{ field: "tour.properties.x", operator: "is_not_set" }] }, [
        "tour.properties"
      ])
      assert.isFalse(nested({ tour: {} }))
      assert.isTrue(nested({ tour: { properties: {} } }))
    })
  })

  describe("dates", () => {
    const on = (field: string) => condition(field, "on", "2027-03-28")

    it("read seconds, milliseconds (the callout exception) and legacy seconds alike", () => {
      const createdAt = on("action.createdAt")
      assert.isTrue(createdAt({ action: { createdAt: 1_806_188_400_000 } }))
      assert.isTrue(createdAt({ action: { createdAt: 1_806_188_400 } }))
      assert.isFalse(createdAt({ action: { createdAt: 1_806_188_399 } }))
      assert.isFalse(createdAt({ action: { createdAt: "1806188400" } }))
    })

    for (const zone of [undefined, "UTC", "America/New_York", "Pacific/Chatham"]) {
      it(`compare Berlin calendar days across DST changes, compiled under TZ=${zone ?? "unchanged"}`, () =>
        withTimeZone(zone, () => {
          const spring = condition("d", "on", "2027-03-28")
          const autumn = condition("d", "on", "2027-10-31")
          const after = condition("d", "after", "2027-03-28")
          const notOn = condition("d", "not_on", "2027-10-31")
          // The spring day is 23 hours long: [2027-03-27T23:00Z, 2027-03-28T22:00Z).
          assert.isFalse(spring({ d: "2027-03-27T22:59:59.999Z" }))
          assert.isTrue(spring({ d: "2027-03-27T23:00:00Z" }))
          assert.isTrue(spring({ d: Date.parse("2027-03-28T21:59:59.999Z") }))
          assert.isFalse(spring({ d: Date.parse("2027-03-28T22:00:00Z") }))
          assert.isTrue(after({ d: Date.parse("2027-03-28T22:00:00Z") / 1000 }))
          assert.isFalse(after({ d: "2027-03-28T23:30:00+02:00" }))
          // The autumn day is 25 hours long: [2027-10-30T22:00Z, 2027-10-31T23:00Z).
          assert.isFalse(autumn({ d: "2027-10-30T21:59:59Z" }))
          assert.isTrue(autumn({ d: "2027-10-30T22:00:00Z" }))
          assert.isTrue(autumn({ d: "2027-10-31T22:59:59Z" }))
          assert.isFalse(autumn({ d: "2027-10-31T23:00:00Z" }))
          assert.isTrue(autumn({ d: "2027-10-31T02:30:00+01:00" }))
          assert.isTrue(autumn({ d: "2027-10-31" }))
          assert.isTrue(notOn({ d: "2027-11-01T00:00:00+01:00" }))
          assert.isTrue(notOn({ d: "not a date" }))
          assert.isTrue(notOn({}))
        }))
    }
  })

  describe("stored filters that cannot be evaluated", () => {
    const invalid: ReadonlyArray<readonly [string, unknown]> = [
      ["not an object", "tour.status = done"],
      ["no conditions", { match: "all" }],
      ["an empty group", { match: "all", conditions: [] }],
      ["an unknown match", { match: "some", conditions: [{ field: "a", operator: "is_not_set" }] }],
      ["an unknown operator", { conditions: [{ field: "a", operator: "regex", value: "." }] }],
      ["a number operator with a string", { conditions: [{ field: "a", operator: "gt", value: "5" }] }],
      ["a malformed date", { conditions: [{ field: "a", operator: "not_on", value: "2027-02-30" }] }],
      ["an empty path segment", { conditions: [{ field: "a..b", operator: "is_not_set" }] }],
      ["a missing field", { conditions: [{ operator: "is_not_set" }] }],
      [
        "too deep a nesting",
        {
          conditions: [
            {
              conditions: [
                {
                  conditions: [
                    { conditions: [{ conditions: [{ conditions: [{ field: "a", operator: "is_not_set" }] }] }] }
                  ]
                }
              ]
            }
          ]
        }
      ],
      [
        "too many conditions",
        { conditions: Array.from({ length: 51 }, () => ({ field: "a", operator: "is_not_set" })) }
      ]
    ]
    for (const [name, filter] of invalid) {
      it(`fail closed: ${name}`, () => {
        const result = Filter.compileFilterEither(filter as Filter.FilterGroup)
        assert.isTrue(Either.isLeft(result))
        for (const engine of engines) {
          const predicate = Filter.compileFilter(filter as Filter.FilterGroup, { engine })
          // A negated condition would match this payload: the filter still must not.
          assert.isFalse(predicate({}))
          assert.isFalse(predicate({ a: 1 }))
        }
      })
    }

    it("never throw on payloads that throw when read", () => {
      const notStatus = condition("tour.status", "not_equals", "x")
      const throwing = {
        get tour(): never {
          throw new Error("boom")
        }
      }
      const proxy = new Proxy(
        {},
        {
          get: () => {
            throw new Error("boom")
          },
          getPrototypeOf: () => {
            throw new Error("boom")
          },
          has: () => {
            throw new Error("boom")
          },
          getOwnPropertyDescriptor: () => {
            throw new Error("boom")
          }
        }
      )
      assert.isFalse(notStatus(throwing))
      assert.isFalse(notStatus({ tour: proxy }))
    })
  })

  it("generates code when it can, and falls back to closures when asked", () => {
    const filter = { match: "all", conditions: [{ field: "a", operator: "equals", value: 1 }] } as const
    const generated = Filter.compileFilter(filter)
    const closures = Filter.compileFilter(filter, { engine: "closures" })
    assert.strictEqual(generated.name, "waybillFilter")
    assert.notStrictEqual(closures.name, "waybillFilter")
    assert.isTrue(generated({ a: 1 }) && closures({ a: 1 }))
  })
})
