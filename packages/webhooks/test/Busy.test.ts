import { assert, describe, it } from "@effect/vitest"
import * as Busy from "../src/internal/busy.js"

// Keeps the event loop working for `ms` without yielding.
const spin = (ms: number) => {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // busy
  }
}

describe("busy gauge", () => {
  it("says busy after a window spent working, and not after one spent waiting", async () => {
    const gauge = Busy.make(0.75, 50)
    const start = Date.now()
    assert.isFalse(gauge.busy(start), "nothing measured yet")
    spin(60)
    assert.isTrue(gauge.busy(Date.now()), "the loop worked the whole window")
    await new Promise((resolve) => setTimeout(resolve, 80))
    assert.isFalse(gauge.busy(Date.now()), "the loop waited the whole window")
  })

  it("answers from the last window until the next one is due", async () => {
    const gauge = Busy.make(0.75, 1_000)
    const t0 = 1_000_000
    gauge.busy(t0)
    spin(30)
    assert.isTrue(gauge.busy(t0 + 1_000), "a window spent working")
    await new Promise((resolve) => setTimeout(resolve, 60))
    assert.isTrue(gauge.busy(t0 + 1_500), "the next window is not due: the last answer stands")
    assert.isFalse(gauge.busy(t0 + 2_000), "the window spent waiting, measured once due")
  })
})
