import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { NewDelivery } from "../src/DeliveryStore.js"
import type { Outcome } from "../src/internal/attempts.js"
import * as Engine from "../src/internal/engine.js"
import type { Settings } from "../src/internal/settings.js"
import * as Signal from "../src/internal/signal.js"
import type { OutboxEvent } from "../src/OutboxReader.js"

const settings = (concurrency: number, perWebhookConcurrency = concurrency): Settings => ({
  timeoutMs: 20_000,
  retryDelayMs: 10_000,
  retryJitter: 0,
  concurrency,
  perWebhookConcurrency,
  leaseMs: 6_000,
  renewEveryMs: 2_000,
  shutdownGraceMs: 0,
  pollIntervalMs: 1_000,
  fanOutBatchSize: 256,
  completionBatchSize: 256,
  recordDelayMs: 100,
  disableAfterFailures: 0,
  fanOutGapMs: 20,
  busyRead: 8,
  waitingMaxMs: 100,
  perWebhookWindow: 2 * perWebhookConcurrency,
  handOffWindow: 4 * perWebhookConcurrency,
  window: 2 * concurrency,
  maxUnwritten: 512
})

const delivery = (id: string, webhookId = "wh"): NewDelivery =>
  ({
    id,
    workspaceId: "ws",
    webhookId,
    eventId: `evt_${id}`,
    eventType: "tour-created",
    eventCreatedAt: 1,
    createdAt: 1,
    dueAt: 1000,
    body: "{}",
    target: { url: "https://example.test/", rateLimitPerSecond: null, ordering: "none", held: false },
    lease: { until: 9000, token: "t" }
  }) as unknown as NewDelivery

const outcome = (id: string, status: "succeeded" | "pending" | "failed", retryAt: number | null = null): Outcome =>
  ({
    claimed: { id, webhookId: "wh", target: { url: "https://example.test/", rateLimitPerSecond: null } },
    completion: { deliveryId: id, leaseToken: "t", attempt: { number: 1 }, status, retryAt },
    detail: status
  }) as unknown as Outcome

const ids = (outcomes: ReadonlyArray<Outcome>) => outcomes.map((each) => each.claimed.id)

const event = (position: string): OutboxEvent => ({ position }) as unknown as OutboxEvent

/** A loop with a fan-out whose runners are only noted, so a test plays their attempts. */
const harness = (concurrency = 8, perWebhookConcurrency = concurrency) => {
  const started: Array<Engine.Held> = []
  const fan = Engine.makeFanOut(settings(concurrency, perWebhookConcurrency), "owner")
  const loop = Engine.makeLoop(settings(concurrency, perWebhookConcurrency), {
    wanted: Signal.make(),
    onRetry: () => Effect.void,
    debug: false,
    startRunner: (held) => started.push(held),
    fan
  })
  // Hands one event's deliveries over, every one attempted before it is recorded.
  const handOver = (...deliveries: Array<NewDelivery>) => {
    const held = deliveries.map((each) => ({
      claimed: { id: each.id, webhookId: each.webhookId, target: each.target } as unknown as Engine.Held["claimed"],
      leaseUntil: 9000
    }))
    Engine.handedOff(loop, fan, [event(`p${fan.made + 1}`)], { events: 1, deliveries, held }, 0)
    return fan.batches.at(-1)!
  }
  const heldOf = (id: string) => started.find((each) => each.claimed.id === id)!
  return { loop, fan, started, handOver, heldOf }
}

describe("the engine", () => {
  it("starts no more runners than its concurrency; a runner takes the next claim, then ends", () => {
    const { loop, started, handOver, heldOf } = harness(2)
    handOver(delivery("a"), delivery("b"), delivery("c"))
    assert.deepStrictEqual(
      started.map((each) => each.claimed.id),
      ["a", "b"]
    )
    assert.strictEqual(loop.runners, 2)
    Engine.attempted(loop, heldOf("a"), undefined)
    assert.strictEqual(Engine.next(loop)?.claimed.id, "c")
    Engine.attempted(loop, heldOf("b"), undefined)
    assert.isUndefined(Engine.next(loop))
    assert.strictEqual(loop.runners, 1)
  })

  it("gives one webhook no more runners than its share while another's work waits", () => {
    const { started, handOver } = harness(4, 1)
    handOver(delivery("a1", "a"), delivery("a2", "a"), delivery("b1", "b"))
    assert.deepStrictEqual(
      started.map((each) => each.claimed.id),
      ["a1", "b1"]
    )
  })

  it("keeps a batch's results while open and says when its last attempt ended", () =>
    Effect.gen(function* () {
      const { loop, fan, handOver, heldOf } = harness()
      const batch = handOver(delivery("a"), delivery("b"))
      yield* fan.ready.wait
      Engine.attempted(loop, heldOf("a"), outcome("a", "succeeded"))
      assert.strictEqual(Engine.inFlight(batch), 1)
      // An attempt that was not made still ends its slot, and the recorder is woken.
      Engine.attempted(loop, heldOf("b"), undefined)
      assert.strictEqual(Engine.inFlight(batch), 0)
      yield* fan.ready.wait
      assert.isTrue(Engine.isUnrecorded(batch))
      assert.deepStrictEqual(loop.results, [])
    }).pipe(Effect.runPromise))

  it("inserts results with their deliveries, a final failure after them, the rest still leased", () => {
    const { loop, fan, handOver, heldOf } = harness()
    const batch = handOver(delivery("a"), delivery("b"), delivery("c"), delivery("d"))
    Engine.attempted(loop, heldOf("a"), outcome("a", "succeeded"))
    Engine.attempted(loop, heldOf("b"), outcome("b", "pending", 5000))
    Engine.attempted(loop, heldOf("c"), outcome("c", "failed"))
    const { rows, carried } = Engine.recording(loop, [batch], false)
    assert.deepStrictEqual(ids(carried), ["a", "b"])
    assert.deepStrictEqual(
      rows.map((row) => [row.id, row.outcome?.status, row.dueAt, row.lease === undefined]),
      [
        ["a", "succeeded", 1000, true],
        ["b", "pending", 5000, true],
        ["c", undefined, 1000, false],
        ["d", undefined, 1000, false]
      ]
    )
    // A result that comes during the write goes after it, with the final failure.
    Engine.attempted(loop, heldOf("d"), outcome("d", "succeeded"))
    assert.deepStrictEqual(loop.results, [])
    Engine.recorded(loop, fan, [batch], batch.position, 9000)
    assert.deepStrictEqual(ids(loop.results), ["c", "d"])
    assert.strictEqual(fan.stored, batch.position)
    assert.deepStrictEqual(fan.batches, [])
    assert.deepStrictEqual(loop.tally, { attempts: 4, succeeded: 2, retried: 1, failed: 1 })
    assert.isFalse(Engine.isUnrecorded(batch))
  })

  it("records a written batch's later results as updates, for the completer", () => {
    const { loop, fan, handOver, heldOf } = harness()
    const batch = handOver(delivery("a"))
    Engine.recording(loop, [batch], false)
    Engine.recorded(loop, fan, [batch], batch.position, 9000)
    Engine.attempted(loop, heldOf("a"), outcome("a", "succeeded"))
    assert.deepStrictEqual(ids(Engine.takeResults(loop)), ["a"])
    assert.strictEqual(loop.unwritten, 1)
    Engine.written(loop, [outcome("a", "succeeded")], true)
    assert.strictEqual(loop.unwritten, 0)
  })

  it("at a stop, a delivery without a result is inserted free to be sent at once", () => {
    const { loop, handOver } = harness()
    const batch = handOver(delivery("a"))
    const { rows } = Engine.recording(loop, [batch], true)
    assert.isUndefined(rows[0]!.lease)
    assert.isUndefined(rows[0]!.outcome)
  })

  it("a write that did not finish is written again with the results that came meanwhile", () => {
    const { loop, fan, handOver, heldOf } = harness()
    const batch = handOver(delivery("a"), delivery("b"))
    Engine.recording(loop, [batch], false)
    Engine.attempted(loop, heldOf("a"), outcome("a", "succeeded"))
    assert.isTrue(Engine.isUnrecorded(batch))
    const again = Engine.recording(loop, [batch], true)
    assert.deepStrictEqual(ids(again.carried), ["a"])
    Engine.recorded(loop, fan, [batch], batch.position, 0)
    assert.deepStrictEqual(loop.results, [])
  })

  it("once dropped, a batch's deliveries are neither sent nor their results kept; it is read again", () => {
    const { loop, fan, handOver, heldOf } = harness()
    const batch = handOver(delivery("a"))
    assert.isTrue(Engine.recordFailed(fan))
    // Said once, until a record succeeds.
    assert.isFalse(Engine.recordFailed(fan))
    assert.isTrue(Engine.isDropped(batch))
    assert.isFalse(Engine.isUnrecorded(batch))
    assert.isUndefined(fan.position)
    Engine.attempted(loop, heldOf("a"), outcome("a", "succeeded"))
    assert.deepStrictEqual(loop.results, [])
    assert.strictEqual(Engine.inFlight(batch), 0)
  })

  it("at a stop, gives back what waits, and writes what was not attempted unleased, counting an attempt cut short", () => {
    const { loop, handOver, heldOf } = harness(2)
    const batch = handOver(delivery("a"), delivery("b"), delivery("c"))
    assert.strictEqual(Engine.started(loop, heldOf("a"), 0), "start")
    assert.strictEqual(Engine.started(loop, heldOf("b"), 0), "start")
    Engine.attempted(loop, heldOf("a"), outcome("a", "succeeded"))
    // `c` never started (given back); `b` was running at the grace's end.
    Engine.stopping(loop)
    assert.strictEqual(Engine.next(loop), undefined)
    assert.deepStrictEqual(
      loop.claims.released.map((each) => each.claimed.id),
      ["c"]
    )
    Engine.abandonRunning(loop)
    const { rows } = Engine.recording(loop, [batch], true)
    assert.deepStrictEqual(
      rows.map((row) => [row.id, row.outcome?.status, row.lease === undefined, row.abandoned ?? 0]),
      [
        ["a", "succeeded", true, 0],
        ["b", undefined, true, 1],
        ["c", undefined, true, 0]
      ]
    )
  })

  it("starts no attempt whose lease would run out before the next renewal", () => {
    const { loop, handOver, heldOf } = harness()
    handOver(delivery("a"))
    assert.strictEqual(Engine.started(loop, heldOf("a"), 7001), "late")
    assert.isFalse(loop.claims.live.has(heldOf("a")))
  })
})
