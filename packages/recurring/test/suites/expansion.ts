import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as Occurrence from "../../src/Occurrence.js"
import * as Schedule from "../../src/Schedule.js"
import * as VehicleClass from "../../src/VehicleClass.js"
import * as WallClock from "../../src/WallClock.js"
import { at, CLASSES, master } from "../fixtures.js"

const policy = VehicleClass.layerFromList(CLASSES)

const schedule = (input: Record<string, unknown>) =>
  Schema.decodeUnknownSync(Schedule.RecurringSchedule)({ leadTimeDays: 7, ...input })

const triggers = (input: Record<string, unknown>, from: string, to: string) =>
  Schedule.triggers(schedule(input), at(from), at(to))

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z")

const expand = (m: Parameters<typeof Occurrence.expand>[0], from: string, to: string) =>
  Occurrence.expand(m, at(from), at(to)).pipe(Effect.provide(policy))

/** The expansion and resolution scenarios; every expectation is an explicit UTC instant. */
export const expansionSuite = () => {
  describe("WallClock.resolve", () => {
    it("Europe/Berlin: a gap moves forward by its length, an overlap takes the earlier instant", () => {
      const berlin = (date: string, time: string) => iso(WallClock.resolve(date, time, "Europe/Berlin"))
      assert.strictEqual(berlin("2027-03-28", "01:59"), "2027-03-28T00:59:00Z")
      assert.strictEqual(berlin("2027-03-28", "02:00"), "2027-03-28T01:00:00Z") // = 03:00 CEST
      assert.strictEqual(berlin("2027-03-28", "02:30"), "2027-03-28T01:30:00Z") // = 03:30 CEST
      assert.strictEqual(berlin("2027-03-28", "03:00"), "2027-03-28T01:00:00Z")
      assert.strictEqual(berlin("2027-10-31", "02:30"), "2027-10-31T00:30:00Z") // CEST, not CET
      assert.strictEqual(berlin("2027-10-31", "03:00"), "2027-10-31T02:00:00Z")
    })

    it("America/New_York: the same rule", () => {
      const ny = (date: string, time: string) => iso(WallClock.resolve(date, time, "America/New_York"))
      assert.strictEqual(ny("2027-03-14", "02:30"), "2027-03-14T07:30:00Z") // = 03:30 EDT
      assert.strictEqual(ny("2027-03-14", "03:30"), "2027-03-14T07:30:00Z")
      assert.strictEqual(ny("2027-11-07", "01:30"), "2027-11-07T05:30:00Z") // EDT, the earlier
      assert.strictEqual(ny("2027-11-07", "02:00"), "2027-11-07T07:00:00Z")
    })

    it("Australia/Lord_Howe: a 30-minute gap moves forward by 30 minutes, its overlap takes the earlier", () => {
      const lh = (date: string, time: string) => iso(WallClock.resolve(date, time, "Australia/Lord_Howe"))
      assert.strictEqual(lh("2027-10-03", "01:59"), "2027-10-02T15:29:00Z") // +10:30
      assert.strictEqual(lh("2027-10-03", "02:15"), "2027-10-02T15:45:00Z") // = 02:45 +11
      assert.strictEqual(
        WallClock.localTime(WallClock.resolve("2027-10-03", "02:15", "Australia/Lord_Howe"), "Australia/Lord_Howe"),
        "02:45:00"
      )
      assert.strictEqual(lh("2027-04-04", "01:45"), "2027-04-03T14:45:00Z") // +11, not 15:15Z (+10:30)
    })

    it("a whole skipped day (Pacific/Apia, 2011-12-30) moves forward by 24 hours", () => {
      assert.strictEqual(iso(WallClock.resolve("2011-12-30", "12:00", "Pacific/Apia")), "2011-12-30T22:00:00Z")
      assert.strictEqual(WallClock.localDate(at("2011-12-30T22:00:00Z"), "Pacific/Apia"), "2011-12-31")
    })

    it("adds calendar days, not 86400-second blocks", () => {
      const before = at("2027-03-27T10:00:00Z") // 11:00 CET
      assert.strictEqual(iso(WallClock.addCalendarDays(before, 1, "Europe/Berlin")), "2027-03-28T09:00:00Z")
      assert.strictEqual(iso(WallClock.addCalendarDays(before, 1, "UTC")), "2027-03-28T10:00:00Z")
      assert.strictEqual(WallClock.weekdayOf("2027-01-04"), "mon")
    })
  })

  describe("Schedule.triggers", () => {
    it("Berlin spring gap: 02:30 fires at 03:30 CEST, once", () => {
      const got = triggers(
        { cronExpressions: ["30 2 * * *"], timezone: "Europe/Berlin" },
        "2027-03-27T00:00:00Z",
        "2027-03-30T00:00:00Z"
      )
      assert.deepStrictEqual(got.map(iso), ["2027-03-27T01:30:00Z", "2027-03-28T01:30:00Z", "2027-03-29T00:30:00Z"])
    })

    it("Berlin autumn overlap: 02:30 fires once, on the first pass", () => {
      const got = triggers(
        { cronExpressions: ["30 2 * * *"], timezone: "Europe/Berlin" },
        "2027-10-30T00:00:00Z",
        "2027-11-02T00:00:00Z"
      )
      assert.deepStrictEqual(got.map(iso), ["2027-10-30T00:30:00Z", "2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"])
    })

    it("hourly across both Berlin changes: 23 triggers on the short day, 24 on the long day", () => {
      const hourly = { cronExpressions: ["0 * * * *"], timezone: "Europe/Berlin" }
      assert.strictEqual(triggers(hourly, "2027-03-27T23:00:00Z", "2027-03-28T22:00:00Z").length, 23)
      const long = triggers(hourly, "2027-10-30T22:00:00Z", "2027-10-31T23:00:00Z")
      assert.strictEqual(long.length, 24)
      // The repeated 02:00 fires on its first pass (00:00Z) only; 01:00Z is 02:00 CET again.
      assert.include(long.map(iso), "2027-10-31T00:00:00Z")
      assert.notInclude(long.map(iso), "2027-10-31T01:00:00Z")
    })

    it("New York gap and overlap", () => {
      const ny = { cronExpressions: ["30 2 * * *", "30 1 * * *"], timezone: "America/New_York" }
      assert.deepStrictEqual(triggers(ny, "2027-03-14T05:00:00Z", "2027-03-14T12:00:00Z").map(iso), [
        "2027-03-14T06:30:00Z", // 01:30 EST
        "2027-03-14T07:30:00Z" // 02:30 does not exist: 03:30 EDT
      ])
      assert.deepStrictEqual(triggers(ny, "2027-11-07T04:00:00Z", "2027-11-07T12:00:00Z").map(iso), [
        "2027-11-07T05:30:00Z", // 01:30 EDT, the earlier of the two
        "2027-11-07T07:30:00Z" // 02:30 EST
      ])
    })

    it("Lord Howe's 30-minute gap keeps the trigger cron-parser drops", () => {
      const got = triggers(
        { cronExpressions: ["15 2 * * *"], timezone: "Australia/Lord_Howe" },
        "2027-10-01T12:00:00Z",
        "2027-10-04T12:00:00Z"
      )
      assert.deepStrictEqual(got.map(iso), ["2027-10-01T15:45:00Z", "2027-10-02T15:45:00Z", "2027-10-03T15:15:00Z"])
    })

    it("overlapping expressions yield one trigger per instant", () => {
      const got = triggers(
        { cronExpressions: ["0 6 * * 1-5", "0 6 * * 1", "0 6 * * MON", "0 6 4 1 *"], timezone: "Europe/Berlin" },
        "2027-01-04T00:00:00Z",
        "2027-01-05T00:00:00Z"
      )
      assert.deepStrictEqual(got.map(iso), ["2027-01-04T05:00:00Z"])
      // 02:00 and 03:00 on the spring day are the same instant: one trigger.
      const spring = triggers(
        { cronExpressions: ["0 2 * * *", "0 3 * * *"], timezone: "Europe/Berlin" },
        "2027-03-28T00:00:00Z",
        "2027-03-28T12:00:00Z"
      )
      assert.deepStrictEqual(spring.map(iso), ["2027-03-28T01:00:00Z"])
    })

    it("day-of-month and day-of-week combine with OR", () => {
      const got = triggers(
        { cronExpressions: ["0 12 13 * 5"], timezone: "UTC" },
        "2027-01-01T00:00:00Z",
        "2027-01-16T00:00:00Z"
      )
      // Fridays 1, 8, 15 January 2027 and Wednesday the 13th.
      assert.deepStrictEqual(got.map(iso), [
        "2027-01-01T12:00:00Z",
        "2027-01-08T12:00:00Z",
        "2027-01-13T12:00:00Z",
        "2027-01-15T12:00:00Z"
      ])
    })

    it("window edges: startsAt inclusive, endsAt exclusive", () => {
      const edges = {
        cronExpressions: ["0 6 * * *"],
        timezone: "UTC",
        startsAt: at("2027-01-04T06:00:00Z"),
        endsAt: at("2027-01-06T06:00:00Z")
      }
      assert.deepStrictEqual(triggers(edges, "2027-01-01T00:00:00Z", "2027-01-10T00:00:00Z").map(iso), [
        "2027-01-04T06:00:00Z",
        "2027-01-05T06:00:00Z"
      ])
      const shifted = { ...edges, startsAt: edges.startsAt + 1, endsAt: edges.endsAt + 1 }
      assert.deepStrictEqual(triggers(shifted, "2027-01-01T00:00:00Z", "2027-01-10T00:00:00Z").map(iso), [
        "2027-01-05T06:00:00Z",
        "2027-01-06T06:00:00Z"
      ])
    })
  })

  describe("Occurrence.expand", () => {
    it.effect("dayOffset stops crossing the Berlin spring change resolve on their own day", () =>
      Effect.gen(function* () {
        const m = master({
          schedule: { cronExpressions: ["0 22 * * 6"], timezone: "Europe/Berlin", leadTimeDays: 7 },
          stops: [
            { from: "22:00", to: "23:00" },
            { from: "02:30", to: "04:00", dayOffset: 1 },
            { from: "08:00", to: "09:00", dayOffset: 2 }
          ]
        })
        const [occurrence] = yield* expand(m, "2027-03-27T00:00:00Z", "2027-03-28T00:00:00Z")
        assert.strictEqual(iso(occurrence!.triggerAt), "2027-03-27T21:00:00Z")
        assert.deepStrictEqual(
          occurrence!.stops.map((s) => [s.dayOffset, iso(s.window.startsAt), iso(s.window.endsAt)]),
          [
            [0, "2027-03-27T21:00:00Z", "2027-03-27T22:00:00Z"],
            [1, "2027-03-28T01:30:00Z", "2027-03-28T02:00:00Z"], // 02:30 → 03:30 CEST
            [2, "2027-03-29T06:00:00Z", "2027-03-29T07:00:00Z"]
          ]
        )
      })
    )

    it.effect("dayOffset stops crossing the Berlin autumn change take the earlier instant", () =>
      Effect.gen(function* () {
        const m = master({
          schedule: { cronExpressions: ["0 22 * * 6"], timezone: "Europe/Berlin", leadTimeDays: 7 },
          stops: [
            { from: "22:00", to: "23:00" },
            { from: "02:30", to: "03:30", dayOffset: 1 }
          ]
        })
        const [occurrence] = yield* expand(m, "2027-10-30T00:00:00Z", "2027-10-31T00:00:00Z")
        assert.strictEqual(iso(occurrence!.triggerAt), "2027-10-30T20:00:00Z")
        assert.deepStrictEqual(
          occurrence!.stops.map((s) => [iso(s.window.startsAt), iso(s.window.endsAt)]),
          [
            ["2027-10-30T20:00:00Z", "2027-10-30T21:00:00Z"],
            ["2027-10-31T00:30:00Z", "2027-10-31T02:30:00Z"]
          ]
        )
      })
    )

    it.effect("dayOffset stops crossing both New York changes", () =>
      Effect.gen(function* () {
        const spring = master({
          schedule: { cronExpressions: ["0 20 * * 6"], timezone: "America/New_York", leadTimeDays: 7 },
          stops: [
            { from: "20:00", to: "21:00" },
            { from: "01:30", to: "02:30", dayOffset: 1 },
            { from: "02:15", to: "03:00", dayOffset: 1 }
          ]
        })
        const [a] = yield* expand(spring, "2027-03-13T00:00:00Z", "2027-03-14T12:00:00Z")
        assert.strictEqual(iso(a!.triggerAt), "2027-03-14T01:00:00Z")
        assert.strictEqual(a!.triggerDate, "2027-03-13")
        assert.deepStrictEqual(
          a!.stops.map((s) => [iso(s.window.startsAt), iso(s.window.endsAt)]),
          [
            ["2027-03-14T01:00:00Z", "2027-03-14T02:00:00Z"],
            ["2027-03-14T06:30:00Z", "2027-03-14T07:30:00Z"], // 02:30 → 03:30 EDT
            // 02:15 → 03:15 EDT, but 03:00 EDT is earlier: the end is clamped to the start.
            ["2027-03-14T07:15:00Z", "2027-03-14T07:15:00Z"]
          ]
        )
        const autumn = master({
          schedule: { cronExpressions: ["0 20 * * 6"], timezone: "America/New_York", leadTimeDays: 7 },
          stops: [
            { from: "20:00", to: "21:00" },
            { from: "01:00", to: "01:45", dayOffset: 1 }
          ]
        })
        const [b] = yield* expand(autumn, "2027-11-06T12:00:00Z", "2027-11-07T12:00:00Z")
        assert.strictEqual(iso(b!.triggerAt), "2027-11-07T00:00:00Z")
        assert.deepStrictEqual(
          [iso(b!.stops[1]!.window.startsAt), iso(b!.stops[1]!.window.endsAt)],
          ["2027-11-07T05:00:00Z", "2027-11-07T05:45:00Z"]
        )
      })
    )

    it.effect("Lord Howe: a trigger and a stop in the 30-minute gap both move forward 30 minutes", () =>
      Effect.gen(function* () {
        const m = master({
          schedule: { cronExpressions: ["15 2 3 10 *"], timezone: "Australia/Lord_Howe", leadTimeDays: 7 },
          stops: [
            { from: "02:10", to: "02:40" },
            { from: "02:00", to: "03:00", dayOffset: 1 }
          ]
        })
        const [o] = yield* expand(m, "2027-10-01T00:00:00Z", "2027-10-05T00:00:00Z")
        assert.strictEqual(iso(o!.triggerAt), "2027-10-02T15:45:00Z")
        assert.strictEqual(o!.triggerDate, "2027-10-03")
        assert.deepStrictEqual(
          o!.stops.map((s) => [iso(s.window.startsAt), iso(s.window.endsAt)]),
          [
            ["2027-10-02T15:40:00Z", "2027-10-02T15:40:00Z"], // 02:10 → 02:40 (+11), 02:40 (+11)
            ["2027-10-03T15:00:00Z", "2027-10-03T16:00:00Z"]
          ]
        )
      })
    )

    it.effect("names, trigger dates and weekday offsets come from the trigger's local date (+14:00)", () =>
      Effect.gen(function* () {
        // Monday 08:00 in Kiritimati is Sunday 18:00 UTC.
        const m = master({
          name: "Line {{ weekday }} {{date}} {{  weekday}}",
          schedule: {
            cronExpressions: ["0 8 * * 1"],
            timezone: "Pacific/Kiritimati",
            leadTimeDays: 7,
            weekdayTimeOffsets: { mon: 30, sun: 120 }
          },
          stops: [
            { from: "09:00", to: "10:00" },
            { from: "23:50", to: "23:59", dayOffset: 1 }
          ]
        })
        const [o] = yield* expand(m, "2027-01-01T00:00:00Z", "2027-01-08T00:00:00Z")
        assert.strictEqual(iso(o!.triggerAt), "2027-01-03T18:00:00Z")
        assert.strictEqual(o!.triggerDate, "2027-01-04")
        assert.strictEqual(o!.weekday, "mon")
        assert.strictEqual(o!.name, "Line Monday 2027-01-04 Monday")
        assert.deepStrictEqual(
          o!.stops.map((s) => [iso(s.window.startsAt), iso(s.window.endsAt)]),
          [
            ["2027-01-03T19:30:00Z", "2027-01-03T20:30:00Z"], // 09:30–10:30 local (+30 for Monday)
            ["2027-01-05T10:20:00Z", "2027-01-05T10:29:00Z"] // Wednesday 00:20–00:29 local: the offset crosses midnight
          ]
        )
      })
    )

    it.effect("negative zones: a Friday-evening trigger is a Friday even when UTC says Saturday", () =>
      Effect.gen(function* () {
        const m = master({
          name: "{{weekday}}",
          schedule: {
            cronExpressions: ["0 20 * * 5"],
            timezone: "Pacific/Pago_Pago",
            leadTimeDays: 7,
            weekdayTimeOffsets: { fri: -60, sat: 600 }
          },
          stops: [
            { from: "21:00", to: "22:00" },
            { from: "06:00", to: "07:00", dayOffset: 1 }
          ]
        })
        const [o] = yield* expand(m, "2027-01-08T00:00:00Z", "2027-01-10T00:00:00Z")
        assert.strictEqual(iso(o!.triggerAt), "2027-01-09T07:00:00Z")
        assert.strictEqual(o!.name, "Friday")
        assert.strictEqual(o!.triggerDate, "2027-01-08")
        assert.deepStrictEqual(
          o!.stops.map((s) => iso(s.window.startsAt)),
          [
            "2027-01-09T07:00:00Z", // 20:00 Friday (−60)
            "2027-01-09T16:00:00Z" // 05:00 Saturday (the Friday offset, never Saturday's)
          ]
        )
      })
    )

    it.effect("the validity window applies to the trigger only; a later stop may pass endsAt", () =>
      Effect.gen(function* () {
        const m = master({
          schedule: {
            cronExpressions: ["0 6 * * *"],
            timezone: "UTC",
            leadTimeDays: 7,
            startsAt: at("2027-01-04T06:00:00Z"),
            endsAt: at("2027-01-05T06:00:00Z")
          },
          stops: [
            { from: "06:00", to: "07:00" },
            { from: "06:00", to: "07:00", dayOffset: 3 }
          ]
        })
        const got = yield* expand(m, "2027-01-01T00:00:00Z", "2027-01-31T00:00:00Z")
        assert.deepStrictEqual(
          got.map((o) => iso(o.triggerAt)),
          ["2027-01-04T06:00:00Z"]
        )
        assert.strictEqual(iso(got[0]!.stops[1]!.window.startsAt), "2027-01-07T06:00:00Z")
      })
    )

    it("the horizon is now's wall-clock time plus N calendar days, across a DST change", () => {
      const now = at("2027-03-27T10:00:00Z") // Saturday 11:00 CET
      const horizon = Occurrence.horizon(now, 1, "Europe/Berlin")
      assert.strictEqual(iso(horizon), "2027-03-28T09:00:00Z") // Sunday 11:00 CEST: 23 hours later
      const s = schedule({ cronExpressions: ["0 11 * * *", "59 10 * * *"], timezone: "Europe/Berlin" })
      assert.deepStrictEqual(Schedule.triggers(s, now, horizon).map(iso), [
        "2027-03-27T10:00:00Z",
        "2027-03-28T08:59:00Z"
      ])
      assert.strictEqual(
        iso(Occurrence.horizon(at("2027-10-30T10:00:00Z"), 1, "Europe/Berlin")),
        "2027-10-31T11:00:00Z"
      )
      assert.strictEqual(Occurrence.horizon(now, 0, "Europe/Berlin"), now)
    })
  })

  describe("vehicle class", () => {
    const weighted = (strategy: string, weights: ReadonlyArray<number | undefined>, vehicleClass = "vc_12t") =>
      master({
        vehicleClass,
        schedule: {
          cronExpressions: ["0 6 * * *"],
          timezone: "UTC",
          leadTimeDays: 1,
          vehicleClassAdjustmentStrategy: strategy
        },
        stops: [
          { from: "08:00", to: "09:00", weights: weights.slice(0, 1) },
          { from: "10:00", to: "11:00", weights: weights.slice(1) }
        ]
      })
    const first = (m: ReturnType<typeof weighted>) =>
      Effect.map(expand(m, "2027-01-04T00:00:00Z", "2027-01-05T00:00:00Z"), (all) => [
        all[0]!.vehicleClass,
        all[0]!.vehicleClassReason
      ])

    it.effect("recalculate picks the lowest-rank class that carries the summed load weight", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* first(weighted("recalculate", [600, 400])), ["vc_3t5", "recalculated"])
        assert.deepStrictEqual(yield* first(weighted("recalculate", [600, 401])), ["vc_7t5", "recalculated"])
        assert.deepStrictEqual(yield* first(weighted("recalculate", [3000, undefined, 1000])), [
          "vc_12t",
          "recalculated"
        ])
        assert.deepStrictEqual(yield* first(weighted("recalculate", [30_000])), ["vc_12t", "no-class-fits"])
        assert.deepStrictEqual(yield* first(weighted("recalculate", [30_000], "vc_x")), ["vc_x", "no-class-fits"])
      })
    )

    it.effect("preserve keeps the master's class and never asks the policy", () =>
      Effect.gen(function* () {
        const m = weighted("preserve", [600])
        const never = Layer.succeed(VehicleClass.VehicleClassPolicy, {
          recalculate: () => Effect.die("the policy must not be asked")
        })
        const got = yield* Occurrence.expand(m, at("2027-01-04T00:00:00Z"), at("2027-01-05T00:00:00Z")).pipe(
          Effect.provide(never)
        )
        assert.deepStrictEqual([got[0]!.vehicleClass, got[0]!.vehicleClassReason], ["vc_12t", "preserved"])
      })
    )

    it("ties in rank go to the smaller class, whatever the list order", () => {
      const tied = [
        { id: "b", name: "B", maxWeightKg: 5000, rank: 1 },
        { id: "a", name: "A", maxWeightKg: 3000, rank: 1 }
      ]
      assert.deepStrictEqual(VehicleClass.choose(tied, "m", 100), { vehicleClass: "a", reason: "recalculated" })
      assert.deepStrictEqual(VehicleClass.choose([...tied].reverse(), "m", 100), {
        vehicleClass: "a",
        reason: "recalculated"
      })
    })
  })

  describe("Occurrence.occurrences (dry run)", () => {
    it.effect("lists N calendar days from now inside the window, whatever the lead time, in the contract shape", () =>
      Effect.gen(function* () {
        const m = master({
          schedule: {
            cronExpressions: ["0 6 * * 1-5"],
            timezone: "Europe/Berlin",
            leadTimeDays: 0,
            endsAt: at("2027-01-08T05:00:00Z")
          }
        })
        const got = yield* Occurrence.occurrences(m, at("2027-01-04T00:00:00Z"), 14).pipe(Effect.provide(policy))
        assert.deepStrictEqual(
          got.map((o) => o.triggerDate),
          ["2027-01-04", "2027-01-05", "2027-01-06", "2027-01-07"]
        )
        assert.deepStrictEqual(Object.keys(got[0]!).sort(), [
          "name",
          "stops",
          "triggerAt",
          "triggerDate",
          "vehicleClass"
        ])
        assert.deepStrictEqual(Object.keys(got[0]!.stops[0]!).sort(), ["dayOffset", "window"])
        const capped = yield* Occurrence.occurrences(m, at("2027-01-04T00:00:00Z"), 14, { limit: 2 }).pipe(
          Effect.provide(policy)
        )
        assert.strictEqual(capped.length, 2)
        // The earliest, with the word that more exist; none when the limit is just reached.
        const run = (limit: number) =>
          Occurrence.dryRun(m, at("2027-01-04T00:00:00Z"), 14, { limit }).pipe(Effect.provide(policy))
        const truncated = yield* run(3)
        assert.deepStrictEqual(
          [truncated.truncated, truncated.data.map((o) => o.triggerDate)],
          [true, ["2027-01-04", "2027-01-05", "2027-01-06"]]
        )
        assert.deepStrictEqual([(yield* run(4)).truncated, (yield* run(4)).data.length], [false, 4])
        assert.deepStrictEqual(yield* run(4), { data: got, truncated: false })
      })
    )
  })
}
