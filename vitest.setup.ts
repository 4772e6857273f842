import { addEqualityTesters } from "@effect/vitest"
import { expect } from "vitest"
import { watchEventLoop } from "./test/blocked-worker.js"

addEqualityTesters()

// Each test file runs in a process of its own (vitest.config.ts), so this runs once per process.
watchEventLoop(
  30_000,
  () => {
    const state = expect.getState()
    return `${state.testPath ?? "?"} :: ${state.currentTestName ?? "(a hook or the file's own code)"}`
  },
  ({ milliseconds, test }) =>
    process.stderr.write(
      `[waybill] this test worker's event loop was held ${milliseconds} ms in ${test}; ` +
        "Vitest fails the run when its worker cannot answer for 60 s: make that work asynchronous\n"
    )
)
