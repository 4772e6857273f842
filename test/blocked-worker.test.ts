import { assert, describe, it } from "@effect/vitest"
import { type Blocked, watchEventLoop } from "./blocked-worker.js"

const holdLoop = (milliseconds: number) => {
  const until = performance.now() + milliseconds
  while (performance.now() < until) {
    // Held on purpose: what a synchronous child process or file tree does to a worker.
  }
}

describe("the blocked-worker watch", () => {
  it("reports a loop held past its threshold, with the test that held it", async () => {
    const reports: Array<Blocked> = []
    const stop = watchEventLoop(
      150,
      () => "the holding test",
      (blocked) => reports.push(blocked),
      20
    )
    await new Promise((resolve) => setTimeout(resolve, 60))
    holdLoop(400)
    await new Promise((resolve) => setTimeout(resolve, 60))
    stop()
    assert.isAtLeast(reports.length, 1)
    assert.strictEqual(reports[0]!.test, "the holding test")
    // The tick before the hold came at most 20 ms before it; the next was due 20 ms after that
    // tick and came after the hold: at least 380 ms late.
    assert.isAtLeast(reports[0]!.milliseconds, 380)
  })
})
