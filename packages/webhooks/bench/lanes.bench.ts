/**
 * The engine's lanes against Effect's own structures, for the same rule: at most `concurrency`
 * attempts in flight in all and `perWebhook` per webhook, webhooks taking turns for free slots.
 *
 * - lanes + runners: the engine's way, `lanes.ts` (an array per webhook, served round robin) and
 *   one runner fiber per attempt in flight, started through a `FiberSet`, taking the next ready item.
 * - semaphores: a fiber per item, a `Semaphore` per webhook, then one for the loop in all.
 *
 * A loop holds `WINDOW` items at once and takes another as each ends, as claims and fan-out feed
 * it. Each item's attempt is one `Effect.yieldNow()`, so the figure is the bookkeeping around it.
 * Figures: items per second and CPU per item, the median of rounds taken in turns. Run with
 * `npm run bench -- lanes` (it lives beside the module it measures, which is internal).
 */
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Lanes from "../src/internal/lanes.js"

const ITEMS = 20_000
const WEBHOOKS = 64
const CONCURRENCY = 128
const PER_WEBHOOK = 32
const ROUNDS = 7
// What a loop holds at once, waiting and in flight (`window`, twice the concurrency): more come as items end.
const WINDOW = 2 * CONCURRENCY

const attempt = Effect.yieldNow()

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[values.length >> 1]!

const viaLanes: Effect.Effect<void> = Effect.scoped(
  Effect.gen(function* () {
    const fork = yield* FiberSet.makeRuntime<never, void, never>()
    const lanes = Lanes.make<number>(PER_WEBHOOK)
    let runners = 0
    let left = ITEMS
    let fed = 0
    const done = Effect.unsafeMakeLatch(false)
    const runner = (item: number): Effect.Effect<void> =>
      Effect.flatMap(attempt, () => {
        lanes.release(`wh${item % WEBHOOKS}`)
        if (--left === 0) done.unsafeOpen()
        if (fed < ITEMS) lanes.push(`wh${fed % WEBHOOKS}`, fed++)
        const next = lanes.take()
        if (next === undefined) {
          runners--
          return Effect.void
        }
        dispatch()
        return runner(next)
      })
    const dispatch = () => {
      while (runners < CONCURRENCY) {
        const next = lanes.take()
        if (next === undefined) return
        runners++
        fork(runner(next))
      }
    }
    while (fed < WINDOW) lanes.push(`wh${fed % WEBHOOKS}`, fed++)
    dispatch()
    yield* done.await
  })
)

const viaSemaphores: Effect.Effect<void> = Effect.scoped(
  Effect.gen(function* () {
    const fork = yield* FiberSet.makeRuntime<never, void, never>()
    const loop = yield* Effect.makeSemaphore(CONCURRENCY)
    const perWebhook = new Map<string, Effect.Semaphore>()
    let left = ITEMS
    let fed = 0
    const done = Effect.unsafeMakeLatch(false)
    const feed = () => {
      const webhookId = `wh${fed++ % WEBHOOKS}`
      let semaphore = perWebhook.get(webhookId)
      if (semaphore === undefined) {
        semaphore = Effect.unsafeMakeSemaphore(PER_WEBHOOK)
        perWebhook.set(webhookId, semaphore)
      }
      fork(Effect.zipRight(semaphore.withPermits(1)(loop.withPermits(1)(attempt)), ended))
    }
    const ended = Effect.sync(() => {
      if (--left === 0) done.unsafeOpen()
      if (fed < ITEMS) feed()
    })
    while (fed < WINDOW) feed()
    yield* done.await
  })
)

const round = async (effect: Effect.Effect<void>) => {
  const cpu = process.cpuUsage()
  const start = performance.now()
  await Effect.runPromise(effect)
  const elapsed = performance.now() - start
  const used = process.cpuUsage(cpu)
  return { perSecond: (ITEMS / elapsed) * 1000, cpuMicros: (used.user + used.system) / ITEMS }
}

const contenders = { "lanes + runners": viaLanes, semaphores: viaSemaphores }
const results: Record<string, Array<{ perSecond: number; cpuMicros: number }>> = {
  "lanes + runners": [],
  semaphores: []
}
// Warm-up, then rounds in turns.
for (const effect of Object.values(contenders)) await round(effect)
for (let i = 0; i < ROUNDS; i++) {
  for (const [name, effect] of Object.entries(contenders)) results[name]!.push(await round(effect))
}

console.log(
  `\nLanes: ${ITEMS} items over ${WEBHOOKS} webhooks, ${CONCURRENCY} in flight, ${PER_WEBHOOK} per webhook (median of ${ROUNDS} rounds)`
)
for (const [name, rows] of Object.entries(results)) {
  console.log(
    `  ${name.padEnd(16)} ${(median(rows.map((row) => row.perSecond)) / 1000).toFixed(0).padStart(6)}k items/s   ${median(rows.map((row) => row.cpuMicros)).toFixed(2)} µs CPU per item`
  )
}
const ratio =
  median(results.semaphores!.map((row) => row.cpuMicros)) /
  median(results["lanes + runners"]!.map((row) => row.cpuMicros))
console.log(`  figure semaphores / lanes CPU per item: ${ratio.toFixed(2)} (above 1: the lanes cost less)`)
