import { addEqualityTesters } from "@effect/vitest"
import { expect } from "vitest"
import { watchEventLoop } from "./test/blocked-worker.js"

addEqualityTesters()

// Once per worker: the package suites share a thread (vitest.config.ts), which runs this file
// again for each of its files.
const watching = Symbol.for("waybill.test.blockedWorker")
const worker = globalThis as { [watching]?: true }
if (worker[watching] === undefined) {
  worker[watching] = true
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
}
