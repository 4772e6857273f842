import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as fc from "fast-check"
import * as DeliveryStats from "../src/DeliveryStats.js"
import { WebhookService } from "../src/WebhookService.js"
import {
  eventually,
  inWorkspace,
  makeLayer,
  NOW,
  ok,
  publish,
  register,
  registration,
  settle,
  tour,
  wsA,
  wsB
} from "./fixtures.js"

const HOUR = 3_600_000

describe("DeliveryStats rules", () => {
  it("takes hours from 1 to 168, 24 when omitted; anything else is an issue at hours", () => {
    assert.deepStrictEqual(DeliveryStats.hoursOf({}), Either.right(24))
    assert.deepStrictEqual(DeliveryStats.hoursOf({ hours: "1" }), Either.right(1))
    assert.deepStrictEqual(DeliveryStats.hoursOf({ hours: "168" }), Either.right(168))
    for (const hours of ["0", "169", "1.5", "-3", "abc", "", " 24", "1e2", "0024"]) {
      assert.deepStrictEqual(
        DeliveryStats.hoursOf({ hours }),
        Either.left([{ path: "hours", message: "must be an integer from 1 to 168" }]),
        hours
      )
    }
  })

  it("latency histograms: exact below 64 ms, buckets of at most 1/32 above; percentiles by nearest rank", () => {
    for (let value = 0; value < 200_000; value += value < 300 ? 1 : 97) {
      const bucket = DeliveryStats.latencyBucket(value)
      const floor = DeliveryStats.bucketFloor(bucket)
      assert.isAtMost(floor, value, `${value}`)
      assert.isBelow(value - floor, Math.max(1, floor / 32), `${value} in bucket ${bucket} from ${floor}`)
      assert.strictEqual(DeliveryStats.latencyBucket(floor), bucket, `${value}: its floor is in its bucket`)
      if (value < 64) assert.strictEqual(floor, value)
    }
    // Powers of two and the values just under them, where a float logarithm may round up.
    for (let exponent = 6; exponent < 31; exponent++) {
      for (const value of [2 ** exponent - 1, 2 ** exponent]) {
        assert.isAtMost(DeliveryStats.bucketFloor(DeliveryStats.latencyBucket(value)), value, `${value}`)
      }
    }
    const histogram = (values: ReadonlyArray<number>) => {
      const counts = new Map<number, number>()
      for (const value of values) {
        const bucket = DeliveryStats.latencyBucket(value)
        counts.set(bucket, (counts.get(bucket) ?? 0) + 1)
      }
      return counts
    }
    assert.strictEqual(DeliveryStats.percentileOf(histogram([1, 2, 3, 4]), 0.5), 2)
    assert.strictEqual(DeliveryStats.percentileOf(histogram([1, 2, 3, 4]), 0.95), 4)
    assert.strictEqual(DeliveryStats.percentileOf(histogram([7]), 0.5), 7)
    assert.strictEqual(DeliveryStats.percentileOf(histogram(Array.from({ length: 60 }, (_, i) => i + 1)), 0.95), 57)
    assert.strictEqual(DeliveryStats.percentileOf(histogram([250]), 0.5), 248)
    assert.isUndefined(DeliveryStats.percentileOf(new Map(), 0.5))
    assert.isNull(DeliveryStats.latencyOf(new Map()))
  })

  it("a histogram's JSON text counts as its object does, in PostgreSQL's spacing or none", () => {
    const window = DeliveryStats.windowOf(1_700_000_000, 168)
    const first = window.since / 3600
    const hour = (at: number, latency: DeliveryStats.HourRow["latency"]) => ({
      hour: first + at,
      succeeded: 1,
      failed: 0,
      pending: 0,
      held: 0,
      latency
    })
    const pgText = (counts: ReadonlyMap<number, number>) =>
      `{${[...counts].map(([bucket, count]) => `"${bucket}": ${count}`).join(", ")}}`
    const compactText = (counts: ReadonlyMap<number, number>) => JSON.stringify(Object.fromEntries(counts))
    fc.assert(
      fc.property(
        fc.array(
          fc.array(fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: -3, max: 20 })), {
            maxLength: 40
          }),
          { maxLength: 30 }
        ),
        (hours) => {
          const maps = hours.map((pairs) => new Map(pairs))
          const expected = DeliveryStats.fromHours(
            window,
            maps.map((counts, at) => hour(at, counts))
          )
          for (const text of [pgText, compactText]) {
            const read = DeliveryStats.fromHours(
              window,
              maps.map((counts, at) => hour(at, text(counts)))
            )
            assert.deepStrictEqual(read, expected)
          }
        }
      )
    )
    const latencyOf = (...texts: ReadonlyArray<string>) =>
      DeliveryStats.fromHours(
        window,
        texts.map((text, at) => hour(at, text))
      ).latencyMs
    // Other JSON is read as JSON: fractions, exponents, other spacing, a key twice; text that is
    // not JSON is a defect, never a count.
    assert.deepStrictEqual(latencyOf('{"12": 2.5, "40": 1}', '{ "12" : 1e0 }', '{"12":\n1}'), { p50: 12, p95: 40 })
    assert.deepStrictEqual(latencyOf("{}", '{"7": 1, "7": 2}', '{"9": 0}'), { p50: 7, p95: 7 })
    for (const text of ['{"64": 1}x', '{"64": 1', '{"64" 1}', "[1]x"]) {
      assert.throws(() => latencyOf(text), SyntaxError, undefined, text)
    }
  })

  it("the window is the last clock hours, the current one included", () => {
    assert.deepStrictEqual(DeliveryStats.windowOf(7_200 * 10 + 1_234, 1), { since: 72_000, hours: 1 })
    assert.deepStrictEqual(DeliveryStats.windowOf(7_200 * 10 + 1_234, 3), { since: 72_000 - 7_200, hours: 3 })
    assert.deepStrictEqual(DeliveryStats.windowOf(72_000, 24), { since: 72_000 - 23 * 3_600, hours: 24 })
  })

  it("every hour of the window is a bucket, oldest first; a later event counts in the last one", () => {
    const window = DeliveryStats.windowOf(100_000, 3)
    const stats = DeliveryStats.summarize(window, [
      { eventCreatedAt: window.since - 1, status: "succeeded", latencyMs: 1 },
      { eventCreatedAt: window.since, status: "succeeded", latencyMs: 10 },
      { eventCreatedAt: window.since + 7_199, status: "failed", latencyMs: 30 },
      { eventCreatedAt: 100_005, status: "succeeded", latencyMs: null },
      { eventCreatedAt: window.since + 10, status: "pending", latencyMs: null },
      { eventCreatedAt: window.since + 10, status: "held", latencyMs: null }
    ])
    assert.deepStrictEqual(stats, {
      succeeded: 2,
      failed: 1,
      pending: 1,
      held: 1,
      latencyMs: { p50: 10, p95: 30 },
      buckets: [
        { start: window.since, succeeded: 1, failed: 0 },
        { start: window.since + 3_600, succeeded: 0, failed: 1 },
        { start: window.since + 7_200, succeeded: 1, failed: 0 }
      ]
    })
    assert.isNull(DeliveryStats.summarize(window, []).latencyMs)
  })
})

// Tours named "fail" get 500 twice (failed after the retry), "wait" a 503 (pending, retry due
// later); the rest 200.
const respond = (request: { readonly body: string }) =>
  ok(request.body.includes('"fail"') ? 500 : request.body.includes('"wait"') ? 503 : 200)

const statsOf = (webhookId: string, hours?: string) =>
  Effect.flatMap(WebhookService, (service) => service.stats(webhookId, hours === undefined ? {} : { hours })).pipe(
    inWorkspace(wsA)
  )

describe("WebhookService.stats (in memory)", () => {
  it.effect("counts the window's deliveries by status and hour, with the latency of those that ended", () =>
    Effect.gen(function* () {
      const webhook = yield* register(registration())
      const at = (ms: number) => TestClock.setTime(NOW + ms)
      // Outside the 24 h window: 30 h ago, 100 ms to its response.
      yield* at(-30 * HOUR)
      yield* publish("tour-created", { tour: { ...tour(), id: "old" } })
      yield* at(-30 * HOUR + 100)
      yield* settle
      // 23 h ago, in the window's first hour: two that succeed 250 ms after their recording.
      yield* at(-23 * HOUR)
      yield* publish("tour-created", { tour: { ...tour(), id: "a" } })
      yield* publish("tour-created", { tour: { ...tour(), id: "b" } })
      yield* at(-23 * HOUR + 250)
      yield* settle
      // 2 h 10 min ago: one that fails, its retry ending 60 s after its recording.
      yield* at(-130 * 60_000)
      yield* publish("tour-created", { tour: { ...tour(), id: "fail" } })
      yield* settle
      yield* at(-130 * 60_000 + 60_000)
      yield* settle
      // 20 min ago, in the current hour: one still waiting for its retry.
      yield* at(-20 * 60_000)
      yield* publish("tour-created", { tour: { ...tour(), id: "wait" } })
      yield* settle
      yield* at(0)

      const day = yield* statsOf(webhook.id)
      // NOW is 1,600 s into its hour: the window starts 23 whole hours before that hour.
      const hourStart = NOW / 1000 - 1_600
      const since = hourStart - 23 * 3_600
      assert.deepStrictEqual(
        { ...day, buckets: day.buckets.filter((bucket) => bucket.succeeded + bucket.failed > 0) },
        {
          succeeded: 2,
          failed: 1,
          pending: 1,
          held: 0,
          // 250 and 60,000 ms, each read as its histogram bucket's floor.
          latencyMs: { p50: 248, p95: 59_392 },
          buckets: [
            { start: since, succeeded: 2, failed: 0 },
            { start: since + 21 * 3_600, succeeded: 0, failed: 1 }
          ]
        }
      )
      assert.deepStrictEqual(
        day.buckets.map((bucket) => bucket.start),
        Array.from({ length: 24 }, (_, i) => since + i * 3_600)
      )
      const week = yield* statsOf(webhook.id, "168")
      assert.deepStrictEqual([week.succeeded, week.failed, week.buckets.length], [3, 1, 168])
      assert.deepStrictEqual(week.latencyMs, { p50: 248, p95: 59_392 })
      const hour = yield* statsOf(webhook.id, "1")
      assert.deepStrictEqual(hour, {
        succeeded: 0,
        failed: 0,
        pending: 1,
        held: 0,
        latencyMs: null,
        buckets: [{ start: hourStart, succeeded: 0, failed: 0 }]
      })
    }).pipe(Effect.provide(makeLayer({ respond, dispatcher: { retryDelayMs: 10_000 } })))
  )

  it.effect("refuses bad hours at hours, and another workspace's webhook is not found", () =>
    Effect.gen(function* () {
      const webhook = yield* register(registration())
      const refused = yield* Effect.flip(statsOf(webhook.id, "169"))
      assert.strictEqual(refused._tag, "ValidationError")
      if (refused._tag === "ValidationError") {
        assert.deepStrictEqual(refused.issues, [{ path: "hours", message: "must be an integer from 1 to 168" }])
      }
      const foreign = yield* Effect.flip(
        Effect.flatMap(WebhookService, (service) => service.stats(webhook.id, {})).pipe(inWorkspace(wsB))
      )
      assert.strictEqual(foreign._tag, "WebhookNotFound")
    }).pipe(Effect.provide(makeLayer({ respond })))
  )

  it.effect("ten requests for one window while it is read cost one read; one after it reads again", () => {
    const opened = Effect.runSync(Deferred.make<void>())
    let reads = 0
    return Effect.gen(function* () {
      const webhook = yield* register(registration())
      yield* publish("tour-created", { tour: tour() })
      yield* settle
      // The first caller goes away while the read runs; the read is left to the ten that joined it.
      const leaving = yield* Effect.fork(statsOf(webhook.id))
      yield* eventually(
        Effect.sync(() => reads === 1),
        "the first read started"
      )
      const ten = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 10 }, () => statsOf(webhook.id)),
          { concurrency: 10 }
        )
      )
      // Each of the ten joins the read.
      for (let turn = 0; turn < 20; turn++) yield* Effect.yieldNow()
      // Another workspace asking for the same id meanwhile joins nothing: its own lookup fails.
      const foreign = yield* Effect.flip(
        Effect.flatMap(WebhookService, (service) => service.stats(webhook.id, {})).pipe(inWorkspace(wsB))
      )
      assert.strictEqual(foreign._tag, "WebhookNotFound")
      yield* Fiber.interrupt(leaving)
      yield* Deferred.succeed(opened, undefined)
      const answers = yield* Fiber.join(ten)
      assert.strictEqual(reads, 1)
      for (const answer of answers) assert.deepStrictEqual([answer.succeeded, answer.buckets.length], [1, 24])
      // Another hour's window is another read, as is the same window once its read ended.
      yield* statsOf(webhook.id, "1")
      yield* statsOf(webhook.id)
      assert.strictEqual(reads, 3)
    }).pipe(
      Effect.provide(
        makeLayer({
          respond,
          // Each read waits until the test opens the gate.
          deliveryStore: (store) => ({
            ...store,
            stats: (...args) =>
              Effect.zipRight(
                Effect.zipRight(
                  Effect.sync(() => reads++),
                  Deferred.await(opened)
                ),
                store.stats(...args)
              )
          })
        })
      )
    )
  })

  // Each read of the store waits until the test opens the gate; `inFlight` counts those waiting.
  const gatedReads = (concurrentStatsReads?: number) => {
    const opened = Effect.runSync(Deferred.make<void>())
    const counted = { reads: 0, inFlight: 0, most: 0 }
    const layer = makeLayer({
      respond,
      concurrentStatsReads,
      deliveryStore: (store) => ({
        ...store,
        stats: (...args) =>
          Effect.sync(() => {
            counted.reads++
            counted.most = Math.max(counted.most, ++counted.inFlight)
          }).pipe(
            Effect.zipRight(Deferred.await(opened)),
            Effect.zipRight(store.stats(...args)),
            Effect.ensuring(Effect.sync(() => counted.inFlight--))
          )
      })
    })
    return { opened, counted, layer }
  }

  // Three webhooks, and a fiber asking for the statistics of each at once.
  const statsOfThree = Effect.gen(function* () {
    const webhooks = [
      yield* register(registration()),
      yield* register(registration({ url: "https://hooks.example.org/second" })),
      yield* register(registration({ url: "https://hooks.example.org/third" }))
    ]
    const reading = yield* Effect.fork(
      Effect.all(
        webhooks.map((webhook) => statsOf(webhook.id)),
        { concurrency: 3 }
      )
    )
    return { webhooks, reading }
  })

  it.effect("reads of different webhooks take turns, one at a time; a request for a waiting read joins it", () => {
    const { opened, counted, layer } = gatedReads()
    return Effect.gen(function* () {
      const { webhooks, reading: first } = yield* statsOfThree
      yield* eventually(
        Effect.sync(() => counted.reads === 1),
        "the first read started"
      )
      // The third webhook's read waits its turn; a second request for it joins the waiting read.
      const joining = yield* Effect.fork(statsOf(webhooks[2]!.id))
      for (let turn = 0; turn < 20; turn++) yield* Effect.yieldNow()
      assert.deepStrictEqual([counted.reads, counted.inFlight], [1, 1])
      // A webhook not found does not wait for a turn.
      const missing = yield* Effect.flip(statsOf("wh_missing"))
      assert.strictEqual(missing._tag, "WebhookNotFound")
      yield* Deferred.succeed(opened, undefined)
      const answers = yield* Fiber.join(first)
      const joined = yield* Fiber.join(joining)
      assert.strictEqual(answers.length, 3)
      assert.strictEqual(joined, answers[2])
      assert.deepStrictEqual([counted.reads, counted.most], [3, 1])
    }).pipe(Effect.provide(layer))
  })

  it.effect("concurrentStatsReads lets that many reads run at once", () => {
    const { opened, counted, layer } = gatedReads(2)
    return Effect.gen(function* () {
      const { reading: all } = yield* statsOfThree
      yield* eventually(
        Effect.sync(() => counted.inFlight === 2),
        "two reads started"
      )
      for (let turn = 0; turn < 20; turn++) yield* Effect.yieldNow()
      assert.strictEqual(counted.reads, 2)
      yield* Deferred.succeed(opened, undefined)
      yield* Fiber.join(all)
      assert.deepStrictEqual([counted.reads, counted.most], [3, 2])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a concurrentStatsReads that is not a positive integer stops the service from being built", () =>
    Effect.gen(function* () {
      for (const bad of [0, -2, 1.5, Number.NaN]) {
        const exit = yield* Effect.exit(
          Layer.build(makeLayer({ respond, concurrentStatsReads: bad })).pipe(Effect.scoped)
        )
        assert.include(
          String(Exit.isFailure(exit) ? exit.cause : "built"),
          "concurrentStatsReads must be a positive integer"
        )
      }
    })
  )
})
