import { assert, describe, it } from "@effect/vitest"
import type { NewDelivery } from "../src/DeliveryStore.js"
import type { Outcome } from "../src/internal/attempts.js"
import * as Batch from "../src/internal/batch.js"

const delivery = (id: string): NewDelivery =>
  ({
    id,
    workspaceId: "ws",
    webhookId: "wh",
    eventId: `evt_${id}`,
    eventType: "tour-created",
    eventCreatedAt: 1,
    createdAt: 1,
    dueAt: 1000,
    body: "{}",
    target: { url: "https://example.test/" },
    lease: { until: 9000, token: "t" }
  }) as unknown as NewDelivery

const outcome = (id: string, status: "succeeded" | "pending" | "failed", retryAt: number | null = null): Outcome =>
  ({
    claimed: { id },
    completion: { deliveryId: id, leaseToken: "t", attempt: { number: 1 }, status, retryAt },
    detail: status
  }) as unknown as Outcome

const ids = (outcomes: ReadonlyArray<Outcome>) => outcomes.map((each) => each.claimed.id)

describe("a fan-out batch", () => {
  it("keeps results while open and says when its last attempt ended", () => {
    const batch = Batch.open(1, [delivery("a"), delivery("b")], "p1", 2, 100)
    assert.strictEqual(Batch.settle(batch, "a", outcome("a", "succeeded")), "kept")
    assert.strictEqual(Batch.inFlight(batch), 1)
    // An attempt that was not made still ends its slot.
    assert.strictEqual(Batch.settle(batch, "b", undefined), "ready")
    assert.strictEqual(Batch.inFlight(batch), 0)
    assert.isTrue(Batch.isUnrecorded(batch))
  })

  it("inserts results with their deliveries, a final failure after them, the rest still leased", () => {
    const batch = Batch.open(1, [delivery("a"), delivery("b"), delivery("c"), delivery("d")], "p1", 4, 100)
    Batch.settle(batch, "a", outcome("a", "succeeded"))
    Batch.settle(batch, "b", outcome("b", "pending", 5000))
    Batch.settle(batch, "c", outcome("c", "failed"))
    const { rows, carried } = Batch.startWriting(batch, false)
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
    assert.strictEqual(Batch.settle(batch, "d", outcome("d", "succeeded")), "kept")
    assert.deepStrictEqual(ids(Batch.written(batch)), ["c", "d"])
    // Once written, results are updates.
    assert.strictEqual(Batch.settle(batch, "d", outcome("d", "succeeded")), "record")
    assert.isFalse(Batch.isUnrecorded(batch))
  })

  it("at a stop, a delivery without a result is inserted free to be sent at once", () => {
    const batch = Batch.open(1, [delivery("a")], "p1", 1, 100)
    const { rows } = Batch.startWriting(batch, true)
    assert.isUndefined(rows[0]!.lease)
    assert.isUndefined(rows[0]!.outcome)
  })

  it("a write that did not finish is written again with the results that came meanwhile", () => {
    const batch = Batch.open(1, [delivery("a"), delivery("b")], "p1", 2, 100)
    Batch.startWriting(batch, false)
    Batch.settle(batch, "a", outcome("a", "succeeded"))
    assert.isTrue(Batch.isUnrecorded(batch))
    const again = Batch.startWriting(batch, true)
    assert.deepStrictEqual(ids(again.carried), ["a"])
    assert.deepStrictEqual(ids(Batch.written(batch)), [])
  })

  it("once dropped, its deliveries are neither sent nor their results kept", () => {
    const batch = Batch.open(1, [delivery("a")], "p1", 1, 100)
    Batch.drop(batch)
    assert.isTrue(Batch.isDropped(batch))
    assert.isFalse(Batch.isUnrecorded(batch))
    assert.strictEqual(Batch.settle(batch, "a", outcome("a", "succeeded")), "kept")
    assert.strictEqual(Batch.inFlight(batch), 0)
  })

  it("at a stop, writes what was not attempted unleased, counting an attempt a stop cut short", () => {
    const batch = Batch.open(1, [delivery("a"), delivery("b"), delivery("c")], "p1", 3, 100)
    Batch.settle(batch, "a", outcome("a", "succeeded"))
    // `b` never started (given back); `c` was running at the grace's end.
    Batch.settle(batch, "b", undefined)
    Batch.abandon(batch, "c")
    const { rows } = Batch.startWriting(batch, true)
    assert.deepStrictEqual(
      rows.map((row) => [row.id, row.outcome?.status, row.lease === undefined, row.abandoned ?? 0]),
      [
        ["a", "succeeded", true, 0],
        ["b", undefined, true, 0],
        ["c", undefined, true, 1]
      ]
    )
  })
})
