/**
 * Recurring expansion: 1,000 masters (3 cron expressions each, Europe/Berlin, 14-day horizon
 * across the 2027-03-28 DST change), expanded from scratch and incrementally from a cursor,
 * beside raw cron-parser iteration of the same expressions in the same run.
 *
 * Targets: expansion ≥ 1 × raw cron-parser in the zone (occurrences/s), and an
 * incremental run with nothing new costs at most 1/20 of the from-scratch run.
 */
import * as Transactor from "@waybill/core/Transactor"
import * as EventOutbox from "@waybill/events/EventOutbox"
import * as Occurrence from "@waybill/recurring/Occurrence"
import * as RecurringMaster from "@waybill/recurring/RecurringMaster"
import * as RecurringMasterRepository from "@waybill/recurring/RecurringMasterRepository"
import * as Schedule from "@waybill/recurring/Schedule"
import * as TourGenerator from "@waybill/recurring/TourGenerator"
import * as TourRepository from "@waybill/recurring/TourRepository"
import * as VehicleClass from "@waybill/recurring/VehicleClass"
import { CronExpressionParser } from "cron-parser"
import { Effect, Layer, Runtime, Schema, TestClock, TestContext } from "effect"
import { type Measurement, measure, report, target } from "./harness.js"

const MASTERS = 1000
const ZONE = "Europe/Berlin"
const LEAD_DAYS = 14
// Saturday 10:00:30 CET; the horizon is Saturday 2027-04-03 10:00:30 CEST. No expression fires
// in hour 10, so the minute after the horizon (the incremental slice) holds nothing new.
const NOW = Date.UTC(2027, 2, 20, 9, 0, 30) / 1000
const NEXT = NOW + 60 // one generator interval later

const expressionsOf = (i: number): Array<string> => [
  `${i % 60} ${5 + (i % 4)} * * 1-5`,
  `${(i * 7) % 60} ${12 + (i % 5)} * * 1-5`,
  `${(i * 13) % 60} ${1 + (i % 3)} * * 0,6` // 01:00–03:59 at weekends: crosses the spring gap
]

const masters = Array.from({ length: MASTERS }, (_, i) =>
  Schema.decodeUnknownSync(RecurringMaster.RecurringMaster)({
    id: `drf_bench_${i}`,
    workspaceId: "wsp_bench",
    name: "Line {{ weekday }} {{ date }}",
    vehicleClass: "vc_12t",
    schedule: {
      cronExpressions: expressionsOf(i),
      timezone: ZONE,
      leadTimeDays: LEAD_DAYS,
      vehicleClassAdjustmentStrategy: i % 2 === 0 ? "preserve" : "recalculate"
    },
    stops: [
      {
        address: { city: "Berlin" },
        timeWindow: { from: "08:00", to: "10:00" },
        dayOffset: 0,
        loads: [{ weightKg: 800 }]
      },
      { address: { city: "Hamburg" }, timeWindow: { from: "02:30", to: "05:00" }, dayOffset: 1, loads: [] }
    ]
  })
)

const classes = [
  { id: "vc_3t5", name: "3.5 t van", maxWeightKg: 1000, rank: 1 },
  { id: "vc_12t", name: "12 t truck", maxWeightKg: 6000, rank: 2 }
]
const policy = VehicleClass.layerFromList(classes)
const HORIZON = Occurrence.horizon(NOW, LEAD_DAYS, ZONE)
const NEXT_HORIZON = Occurrence.horizon(NEXT, LEAD_DAYS, ZONE)

// --- raw cron-parser: the same expressions over the same window, parsed once (not timed) ----------
const parse = (tz: string, expressions: ReadonlyArray<string>) =>
  expressions.map((expression) =>
    CronExpressionParser.parse(expression, { tz, currentDate: (NOW - 1) * 1000, endDate: (HORIZON - 1) * 1000 })
  )
const iterate = (iterators: ReadonlyArray<ReturnType<typeof CronExpressionParser.parse>>): number => {
  let count = 0
  for (const iterator of iterators) {
    iterator.reset(new Date((NOW - 1) * 1000))
    for (;;) {
      try {
        iterator.next()
        count++
      } catch {
        break
      }
    }
  }
  return count
}
const berlinIterators = masters.map((m) => parse(ZONE, m.schedule.cronExpressions))
const utcIterators = masters.map((m) => parse("UTC", m.schedule.cronExpressions))

// --- ours ----------------------------------------------------------------------------------------
const runtime = Effect.runSync(
  Effect.scoped(
    Effect.flatMap(Layer.build(policy), (context) =>
      Effect.provide(Effect.runtime<VehicleClass.VehicleClassPolicy>(), context)
    )
  )
)
const runSync = Runtime.runSync(runtime)
const expandOne = (m: RecurringMaster.RecurringMaster, from: number, to: number): number =>
  runSync(Occurrence.expand(m, from, to)).length
/** One run over every master as one effect, the way the generator runs it. */
const expandAll = (from: number, to: number): number =>
  runSync(
    Effect.reduce(masters, 0, (total, m) => Effect.map(Occurrence.expand(m, from, to), (list) => total + list.length))
  )

const sum = (f: (m: RecurringMaster.RecurringMaster, i: number) => number) =>
  masters.reduce((total, m, i) => total + f(m, i), 0)
const rawCount = sum((_, i) => iterate(berlinIterators[i]!))
const utcCount = sum((_, i) => iterate(utcIterators[i]!))
const ourCount = sum((m) => expandOne(m, NOW, HORIZON))
const triggerCount = sum((m) => Schedule.triggers(m.schedule, NOW, HORIZON).length)
const incrementalCount = sum((m) => expandOne(m, HORIZON, NEXT_HORIZON))
if (incrementalCount !== 0) throw new Error(`the incremental slice should be empty, got ${incrementalCount}`)

console.log(
  `${MASTERS} masters × 3 expressions, ${ZONE}, ${LEAD_DAYS}-day horizon ${new Date(NOW * 1000).toISOString()} → ${new Date(HORIZON * 1000).toISOString()}`
)
console.log(`  occurrences per run: ours ${ourCount} (deduplicated), cron-parser ${rawCount}, triggers ${triggerCount}`)

/**
 * One operation is one master (cycling through all 1,000), so the harness's batches stay small;
 * a run over all masters costs 1,000 operations, and occurrences/s = masters/s × occurrences per
 * master.
 */
const perMaster = (
  name: string,
  occurrences: number,
  fn: (m: RecurringMaster.RecurringMaster, i: number) => number
) => {
  let i = 0
  const masterRate = measure(
    name,
    () => {
      const index = i++ % MASTERS
      return fn(masters[index]!, index)
    },
    3
  )
  return {
    occurrences: { name, opsPerSecond: (masterRate.opsPerSecond * occurrences) / MASTERS },
    runs: { name, opsPerSecond: masterRate.opsPerSecond / MASTERS }
  }
}

const throughput = [
  perMaster("cron-parser, UTC, iterate", utcCount, (_, i) => iterate(utcIterators[i]!)),
  perMaster("cron-parser, Europe/Berlin, iterate", rawCount, (_, i) => iterate(berlinIterators[i]!)),
  perMaster("cron-parser, Europe/Berlin, parse + iterate", rawCount, (m) =>
    iterate(parse(ZONE, m.schedule.cronExpressions))
  ),
  perMaster("waybill triggers, warm", triggerCount, (m) => Schedule.triggers(m.schedule, NOW, HORIZON).length),
  perMaster("waybill expand, warm", ourCount, (m) => expandOne(m, NOW, HORIZON)),
  perMaster("waybill expand, caches cleared per master", ourCount, (m) => {
    Schedule.clearCaches()
    return expandOne(m, NOW, HORIZON)
  })
].map((row) => row.occurrences)
report("Expansion throughput (occurrences/s)", throughput, "cron-parser, Europe/Berlin, iterate", "occ/s")

// --- from scratch vs incremental, engine and generator -------------------------------------------
/** Runs/s of a whole run, from the median of `rounds` timed runs after two warm-up runs. */
const timeRuns = (name: string, fn: () => unknown, rounds = 9): Measurement => {
  fn()
  fn()
  const times: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    const start = performance.now()
    fn()
    times.push(performance.now() - start)
  }
  return { name, opsPerSecond: 1000 / median(times) }
}
const median = (values: Array<number>) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const engineRuns = [
  timeRuns("expand from scratch (cursor empty)", () => expandAll(NOW, HORIZON)),
  timeRuns("expand incremental (cursor at horizon, +60 s)", () => expandAll(HORIZON, NEXT_HORIZON))
]

const generatorRuns = async (): Promise<ReadonlyArray<Measurement>> => {
  const scratch: Array<number> = []
  const incremental: Array<number> = []
  for (let round = 0; round < 5; round++) {
    const ports = Layer.mergeAll(
      RecurringMasterRepository.layerMemory,
      TourRepository.layerMemory,
      EventOutbox.layerMemory,
      Transactor.layerMemory,
      policy
    )
    const layer = TourGenerator.layer().pipe(Layer.provideMerge(ports), Layer.provideMerge(TestContext.TestContext))
    await Effect.runPromise(
      Effect.gen(function* () {
        const control = yield* RecurringMasterRepository.MemoryMasters
        const generator = yield* TourGenerator.TourGenerator
        for (const m of masters) yield* control.activate(m, NOW)
        yield* TestClock.setTime(NOW * 1000)
        let start = performance.now()
        const first = yield* generator.run
        scratch.push(performance.now() - start)
        if (first.toursCreated !== ourCount) throw new Error(`expected ${ourCount} tours, got ${first.toursCreated}`)
        yield* TestClock.setTime(NEXT * 1000)
        start = performance.now()
        const next = yield* generator.run
        incremental.push(performance.now() - start)
        if (next.toursCreated !== 0) throw new Error("the incremental run should create nothing")
      }).pipe(Effect.provide(layer))
    )
  }
  return [
    { name: "generator run from scratch", opsPerSecond: 1000 / median(scratch) },
    { name: "generator run incremental, nothing new", opsPerSecond: 1000 / median(incremental) }
  ]
}

const generator = await generatorRuns()
report(
  `Runs over ${MASTERS} masters (runs/s)`,
  [...engineRuns, ...generator],
  "expand from scratch (cursor empty)",
  "runs/s"
)

console.log("")
const results = [
  target(
    "expand (cold caches) / raw cron-parser in Europe/Berlin, occurrences/s",
    throughput[5]!.opsPerSecond / throughput[1]!.opsPerSecond,
    1
  ),
  target(
    "expand (warm) / raw cron-parser in Europe/Berlin, occurrences/s",
    throughput[4]!.opsPerSecond / throughput[1]!.opsPerSecond,
    1
  ),
  target("expand: from-scratch cost / incremental cost", engineRuns[1]!.opsPerSecond / engineRuns[0]!.opsPerSecond, 20),
  target(
    "generator run: from-scratch cost / incremental cost",
    generator[1]!.opsPerSecond / generator[0]!.opsPerSecond,
    20
  )
]
if (results.some((ok) => !ok)) process.exitCode = 1
