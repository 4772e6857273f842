import { assert, describe, it } from "@effect/vitest"
import { Either, Option, Schema } from "effect"
import * as fc from "fast-check"
import * as Schedule from "../src/Schedule.js"

const utc = (iso: string): number => Date.parse(iso) / 1000

const NOW = utc("2026-12-01T00:00:00Z")

const valid = {
  cronExpressions: ["0 6 * * 1-5"],
  timezone: "Europe/Berlin",
  leadTimeDays: 7,
  startsAt: utc("2027-01-01T00:00:00Z"),
  endsAt: utc("2028-01-01T00:00:00Z"),
  weekdayTimeOffsets: { sat: 60 },
  vehicleClassAdjustmentStrategy: "preserve"
}

const issuesOf = (input: unknown, now = NOW, phase?: Schedule.Phase) => {
  const result = Schedule.validateSchedule(input, now, phase === undefined ? undefined : { phase })
  return Either.isLeft(result) ? result.left : []
}

const paths = (input: unknown, now = NOW, phase?: Schedule.Phase) => issuesOf(input, now, phase).map((i) => i.path)

describe("validateSchedule", () => {
  it("accepts the contract example and defaults the strategy to recalculate", () => {
    const result = Schedule.validateSchedule({ ...valid, vehicleClassAdjustmentStrategy: undefined }, NOW)
    assert.isTrue(Either.isRight(result))
    if (Either.isRight(result)) {
      assert.strictEqual(result.right.vehicleClassAdjustmentStrategy, "recalculate")
      assert.deepStrictEqual(result.right.cronExpressions, ["0 6 * * 1-5"])
    }
    const kept = Schedule.validateSchedule(valid, NOW)
    assert.isTrue(Either.isRight(kept) && kept.right.vehicleClassAdjustmentStrategy === "preserve")
  })

  it("reads null optional fields as absent", () => {
    const result = Schedule.validateSchedule(
      { ...valid, startsAt: null, endsAt: null, weekdayTimeOffsets: null, vehicleClassAdjustmentStrategy: null },
      NOW
    )
    assert.isTrue(Either.isRight(result))
    if (Either.isRight(result)) {
      assert.isFalse("startsAt" in result.right)
      assert.strictEqual(result.right.vehicleClassAdjustmentStrategy, "recalculate")
    }
  })

  it("reports every problem at once, each with its path", () => {
    const issues = issuesOf({
      cronExpressions: ["0 6 * * 1-5", "0 25 * * *", "* * * *", "0 6 * * * 2027", "H 5 * * *", 7, "@daily"],
      timezone: "Mars/Olympus_Mons",
      leadTimeDays: 366,
      startsAt: NOW - 60,
      endsAt: NOW - 120,
      weekdayTimeOffsets: { sat: 721, funday: 5, sun: 1.5 },
      vehicleClassAdjustmentStrategy: "shrink",
      colour: "red"
    })
    assert.sameMembers(
      issues.map((i) => i.path),
      [
        "colour",
        "cronExpressions.1",
        "cronExpressions.2",
        "cronExpressions.3",
        "cronExpressions.4",
        "cronExpressions.5",
        "cronExpressions.6",
        "timezone",
        "leadTimeDays",
        "startsAt",
        "endsAt",
        "weekdayTimeOffsets.sat",
        "weekdayTimeOffsets.funday",
        "weekdayTimeOffsets.sun",
        "vehicleClassAdjustmentStrategy"
      ]
    )
    const byPath = new Map(issues.map((i) => [i.path, i.message]))
    assert.strictEqual(byPath.get("startsAt"), "must not be in the past")
    assert.strictEqual(byPath.get("endsAt"), "must be after startsAt")
    assert.include(byPath.get("cronExpressions.1"), "hour")
    assert.include(byPath.get("cronExpressions.2"), "exactly 5 fields")
    assert.include(byPath.get("cronExpressions.3"), "exactly 5 fields")
    assert.include(byPath.get("cronExpressions.4"), "H")
    assert.include(byPath.get("timezone"), "IANA")
  })

  it("never shows cron-parser's own messages", () => {
    for (const expression of ["0 0 30 2 *", "0 0 * * 5#3,1", "a b c d e", "0 0 32 * *", "0-70 * * * *"]) {
      const issues = issuesOf({ ...valid, cronExpressions: [expression] })
      assert.strictEqual(issues.length, 1, expression)
      const message = issues[0]!.message
      assert.match(message, /^is not a valid cron expression/, expression)
      for (const raw of ["Constraint error", "Invalid explicit", "Validation error", "Invalid characters"]) {
        assert.notInclude(message, raw)
      }
    }
  })

  it("requires the three mandatory fields and an object", () => {
    assert.sameMembers(paths({}), ["cronExpressions", "timezone", "leadTimeDays"])
    assert.deepStrictEqual(paths([]), [""])
    assert.deepStrictEqual(paths("x"), [""])
  })

  it("refuses a schedule nested deeper than 64 levels at the path where the limit is crossed", () => {
    // The schedule, weekdayTimeOffsets, then `levels` arrays under `sat`.
    const arrays = (levels: number) => JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`)
    for (const levels of [63, 5_000, 100_000]) {
      assert.deepStrictEqual(issuesOf({ ...valid, weekdayTimeOffsets: { sat: arrays(levels) } }), [
        {
          path: ["weekdayTimeOffsets", "sat", ...Array<string>(62).fill("0")].join("."),
          message: "nests deeper than 64 levels of objects and arrays"
        }
      ])
    }
    assert.deepStrictEqual(paths({ ...valid, weekdayTimeOffsets: { sat: arrays(62) } }), ["weekdayTimeOffsets.sat"])
  })

  it("bounds the number of expressions to 1..16", () => {
    assert.deepStrictEqual(paths({ ...valid, cronExpressions: [] }), ["cronExpressions"])
    const seventeen = Array.from({ length: 17 }, (_, i) => `${i} 6 * * *`)
    assert.deepStrictEqual(paths({ ...valid, cronExpressions: seventeen }), ["cronExpressions"])
    const sixteen = seventeen.slice(0, 16)
    assert.deepStrictEqual(paths({ ...valid, cronExpressions: sixteen }), [])
    assert.deepStrictEqual(paths({ ...valid, cronExpressions: "0 6 * * *" }), ["cronExpressions"])
  })

  it("accepts cron-parser's extensions (names, L, #) but not 4 or 6 fields", () => {
    for (const expression of ["0 6 * * MON-FRI", "0 6 L * *", "0 6 * * 5L", "0 6 * * 5#2", "*/15 6-8 * JAN,FEB THU"]) {
      assert.deepStrictEqual(paths({ ...valid, cronExpressions: [expression] }), [], expression)
    }
    for (const expression of ["6 * * *", "0 0 6 * * *", ""]) {
      assert.deepStrictEqual(paths({ ...valid, cronExpressions: [expression] }), ["cronExpressions.0"], expression)
    }
  })

  it("checks the zone before anything parses it", () => {
    for (const zone of ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC", "Asia/Kathmandu"]) {
      assert.deepStrictEqual(paths({ ...valid, timezone: zone }), [], zone)
    }
    for (const zone of ["Europe/Berln", "+01:00", "", "Local", "GMT+1/x", "../etc/passwd"]) {
      assert.deepStrictEqual(paths({ ...valid, timezone: zone }), ["timezone"], zone)
    }
  })

  it("bounds leadTimeDays to integers 0..365", () => {
    for (const days of [0, 365]) assert.deepStrictEqual(paths({ ...valid, leadTimeDays: days }), [])
    for (const days of [-1, 366, 1.5, "7"])
      assert.deepStrictEqual(paths({ ...valid, leadTimeDays: days }), ["leadTimeDays"])
  })

  it("keeps the window in the future at create: startsAt not past, endsAt after start or now", () => {
    assert.deepStrictEqual(paths({ ...valid, startsAt: NOW }), [])
    assert.deepStrictEqual(paths({ ...valid, startsAt: NOW - 1 }), ["startsAt"])
    assert.deepStrictEqual(paths({ ...valid, endsAt: valid.startsAt }), ["endsAt"])
    const { startsAt: _, ...open } = valid
    assert.deepStrictEqual(paths({ ...open, endsAt: NOW }), ["endsAt"])
    assert.deepStrictEqual(paths({ ...open, endsAt: NOW + 1 }), [])
    assert.deepStrictEqual(paths({ ...valid, startsAt: "soon" }), ["startsAt"])
  })

  it("at activation accepts a past start but wants a future end and a trigger in the window", () => {
    const past = { ...valid, startsAt: NOW - 86_400 * 30 }
    assert.deepStrictEqual(paths(past, NOW, "activation"), [])
    assert.deepStrictEqual(paths({ ...past, endsAt: NOW }, NOW, "activation"), ["endsAt"])
    // A Monday-only schedule whose window (Wed..Fri) holds no Monday.
    const noTrigger = {
      ...valid,
      cronExpressions: ["0 6 * * 1"],
      timezone: "UTC",
      startsAt: utc("2027-01-06T00:00:00Z"),
      endsAt: utc("2027-01-09T00:00:00Z")
    }
    assert.deepStrictEqual(issuesOf(noTrigger, NOW, "activation"), [
      { path: "", message: "has no trigger inside its validity window" }
    ])
    assert.deepStrictEqual(paths(noTrigger, NOW, "create"), [])
  })

  it("a schedule the schema takes whole gets the issues the field-by-field checks give", () => {
    // A key the schema does not know sends a schedule through the field-by-field checks; its own
    // issue aside, they must report what the whole-schema path reports for the same fields.
    const either = <A>(...values: ReadonlyArray<A>) => fc.constantFrom(...values)
    const schedule = fc.record(
      {
        cronExpressions: either<unknown>(["0 6 * * 1-5"], ["0 6 * * 1-5", "30 7 * * 6"], [], ["0 25 * * *"], "x", [7]),
        timezone: either<unknown>("Europe/Berlin", "UTC", "Mars/Olympus_Mons", 5, null),
        leadTimeDays: either<unknown>(0, 7, 365, 366, -1, 1.5, "7", null),
        startsAt: either<unknown>(NOW + 86_400, NOW - 60, NOW, 1.5, -1, null, undefined),
        endsAt: either<unknown>(NOW + 400 * 86_400, NOW + 3600, NOW - 120, 253402300800, null, undefined),
        weekdayTimeOffsets: either<unknown>({ sat: 60 }, {}, { funday: 5 }, { sun: 721 }, { mon: 1.5 }, [], null),
        vehicleClassAdjustmentStrategy: either<unknown>("preserve", "recalculate", "shrink", null, undefined)
      },
      { requiredKeys: [] }
    )
    const phase = either<Schedule.Phase>("create", "activation")
    fc.assert(
      fc.property(schedule, phase, (input, phase) => {
        const whole = issuesOf(input, NOW, phase)
        const byField = issuesOf({ ...input, probe: true }, NOW, phase).filter((issue) => issue.path !== "probe")
        const result = Schedule.validateSchedule(input, NOW, { phase })
        // With no issue but the probe's, the field-by-field path stops there; at activation the
        // whole path may still find no trigger in the window.
        if (Either.isLeft(result) && byField.length === 0) {
          assert.deepStrictEqual(whole, [{ path: "", message: "has no trigger inside its validity window" }])
        } else {
          assert.deepStrictEqual(whole, byField)
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("accepts exactly what the schema decodes strictly, and gives the schema's value", () => {
    // The whole-schema path settles null and absent fields itself and checks the decoded side
    // once; it must agree with the schema's own strict decoding, down to the order of the keys.
    const strict = Schema.decodeUnknownEither(Schedule.RecurringSchedule, { onExcessProperty: "error" })
    const near = <A>(...values: ReadonlyArray<A>) => fc.oneof(fc.constantFrom(...values), fc.jsonValue({ maxDepth: 2 }))
    const schedule = fc.record(
      {
        cronExpressions: near<unknown>(["0 6 * * 1-5"], ["30 7 * * 6", "0 6 * * 1-5"], [], ["0 25 * * *"]),
        timezone: near<unknown>("Europe/Berlin", "UTC", "Mars/Olympus_Mons"),
        leadTimeDays: near<unknown>(0, 7, 365, 366, -1, 1.5),
        startsAt: near<unknown>(NOW + 86_400, NOW - 60, 1.5, -1, null, undefined),
        endsAt: near<unknown>(NOW + 400 * 86_400, NOW + 3600, 253402300800, null, undefined),
        weekdayTimeOffsets: near<unknown>({ sat: 60 }, { sun: -30, mon: 15 }, {}, { funday: 5 }, { sat: null }, null),
        vehicleClassAdjustmentStrategy: near<unknown>("preserve", "recalculate", "shrink", null, undefined)
      },
      { requiredKeys: [] }
    )
    fc.assert(
      fc.property(schedule, fc.boolean(), (given, reversed) => {
        // Keys in either order: the value must come out in the schema's.
        const input = reversed ? Object.fromEntries(Object.entries(given).reverse()) : given
        const present = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined))
        const expected = strict(present)
        const result = Schedule.validateSchedule(input, NOW, { phase: "create" })
        if (Either.isLeft(expected)) {
          assert.isTrue(Either.isLeft(result), JSON.stringify(input))
        } else if (Either.isRight(result)) {
          assert.strictEqual(JSON.stringify(result.right), JSON.stringify(expected.right))
        } else {
          // Taken whole, only the rules across fields (the validity window) remain.
          for (const issue of result.left) assert.include(["startsAt", "endsAt"], issue.path, JSON.stringify(input))
        }
      }),
      { numRuns: 3000 }
    )
  })

  it("decodes through the schema alone for callers that only need the shape", () => {
    const { vehicleClassAdjustmentStrategy: _, ...withoutStrategy } = valid
    const decoded = Schema.decodeUnknownSync(Schedule.RecurringSchedule)(withoutStrategy)
    assert.strictEqual(decoded.vehicleClassAdjustmentStrategy, "recalculate")
    assert.throws(() => Schema.decodeUnknownSync(Schedule.RecurringSchedule)({ ...valid, timezone: "Nowhere/City" }))
  })
})

describe("hasTriggerInWindow / firstTrigger", () => {
  const schedule = Schema.decodeUnknownSync(Schedule.RecurringSchedule)({
    cronExpressions: ["0 6 * * 1"],
    timezone: "Europe/Berlin",
    leadTimeDays: 0,
    startsAt: utc("2027-01-01T00:00:00Z"),
    endsAt: utc("2027-01-12T00:00:00Z")
  })

  it("finds the first trigger inside the window, not before startsAt", () => {
    // Monday 2027-01-04 06:00 CET
    assert.deepStrictEqual(Schedule.firstTrigger(schedule, NOW), Option.some(utc("2027-01-04T05:00:00Z")))
    assert.deepStrictEqual(
      Schedule.firstTrigger(schedule, utc("2027-01-04T05:00:01Z")),
      Option.some(utc("2027-01-11T05:00:00Z"))
    )
    assert.isTrue(Schedule.hasTriggerInWindow(schedule, NOW))
    assert.isFalse(Schedule.hasTriggerInWindow(schedule, utc("2027-01-11T05:00:01Z")))
  })

  it("searches years ahead for a rare open-ended schedule (February 29)", () => {
    const leap = Schema.decodeUnknownSync(Schedule.RecurringSchedule)({
      cronExpressions: ["0 12 29 2 *"],
      timezone: "Asia/Tokyo",
      leadTimeDays: 1
    })
    assert.deepStrictEqual(Schedule.firstTrigger(leap, NOW), Option.some(utc("2028-02-29T03:00:00Z")))
  })
})
