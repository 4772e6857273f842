import { assert, describe, it } from "@effect/vitest"
import * as Busy from "../src/internal/busy.js"

// An event loop whose working and waiting time the test scripts, measured as Node measures it.
const scriptedLoop = () => {
  let active = 0
  let idle = 0
  const measure: Busy.Measure = (since) => {
    const deltaActive = active - (since?.active ?? 0)
    const deltaIdle = idle - (since?.idle ?? 0)
    const total = deltaActive + deltaIdle
    return { active: deltaActive, idle: deltaIdle, utilization: total === 0 ? 0 : deltaActive / total }
  }
  return {
    measure,
    work: (ms: number) => {
      active += ms
    },
    wait: (ms: number) => {
      idle += ms
    }
  }
}

describe("busy gauge", () => {
  it("says busy after a window spent working, and not after one spent waiting", () => {
    const loop = scriptedLoop()
    const gauge = Busy.make(0.75, 50, loop.measure)
    assert.isFalse(gauge.busy(0), "nothing measured yet")
    loop.work(60)
    assert.isTrue(gauge.busy(60), "the loop worked the whole window")
    loop.wait(80)
    assert.isFalse(gauge.busy(140), "the loop waited the whole window")
    // The threshold: three quarters of a window spent working is busy, less is not.
    loop.work(75)
    loop.wait(25)
    assert.isTrue(gauge.busy(240))
    loop.work(74)
    loop.wait(26)
    assert.isFalse(gauge.busy(340))
  })

  it("answers from the last window until the next one is due", () => {
    const loop = scriptedLoop()
    const t0 = 1_000_000
    const gauge = Busy.make(0.75, 1_000, loop.measure)
    gauge.busy(t0)
    loop.work(1_000)
    assert.isTrue(gauge.busy(t0 + 1_000), "a window spent working")
    loop.wait(500)
    assert.isTrue(gauge.busy(t0 + 1_500), "the next window is not due: the last answer stands")
    loop.wait(500)
    assert.isFalse(gauge.busy(t0 + 2_000), "the window spent waiting, measured once due")
  })

  it("measures this process's event loop by default", () => {
    const gauge = Busy.make(0.75, 20)
    gauge.busy(0)
    // A window the loop spends working without yielding: active time by Node's measure, also
    // while the machine keeps the thread waiting for a core (a wait on a timer is not tested
    // here: whether the loop idles through it depends on what else runs in this process).
    const until = performance.now() + 40
    while (performance.now() < until) {
      // working
    }
    assert.isTrue(gauge.busy(40))
  })
})
