import { defaultClientConditions, defaultServerConditions } from "vite"
import { configDefaults, defineConfig } from "vitest/config"
import { LongestFirst } from "./test/sequencer.js"

// Inside the workspace, `@waybill/*` imports resolve to the TypeScript sources (the
// `@waybill/source` export condition), never to a build that may be stale.
const source = "@waybill/source"

// Package suites that need a process of their own: they set the process's time zone (`TZ`), which
// a worker thread cannot, or fail after other files in a shared thread (decision 0137).
const ownProcess = [
  "packages/filters/test/BerlinDay.test.ts",
  "packages/filters/test/Compile.test.ts",
  "packages/recurring/test/engine.chatham.test.ts",
  "packages/recurring/test/engine.utc.test.ts",
  "packages/server/test/ProcessorTracer.test.ts",
  "packages/server/test/Sweeps.test.ts"
]
const packageSuites = ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts"]
// What both package projects run with.
const packageOptions = { setupFiles: ["./vitest.setup.ts"], testTimeout: 30_000, hookTimeout: 60_000 }

// The pure and storage packages in one shared worker thread, the few that cannot share in
// processes of their own, and the end-to-end tests over real HTTP, each file in a process of its own.
export default defineConfig({
  resolve: { conditions: [source, ...defaultClientConditions] },
  // Without Vite's `module` condition on the server side: Node does not know it, and some packages
  // answer it with a build for bundlers that Node cannot load (OpenTelemetry's imports without
  // file extensions), so tests load what the server loads.
  ssr: {
    resolve: {
      conditions: [source, ...defaultServerConditions.filter((condition) => condition !== "module")],
      externalConditions: [source]
    }
  },
  test: {
    // Made once per run: a migrated PGlite snapshot that every suite's embedded database loads.
    globalSetup: ["./vitest.global-setup.ts"],
    // A JSON run (`WAYBILL_LOG_FORMAT=json npm test`) also checks every line on its console.
    reporters: process.env.WAYBILL_LOG_FORMAT === "json" ? ["default", "./test/json-logs-reporter.ts"] : ["default"],
    // Vitest's default on 2 cores is one file at a time. Most suites spend their time waiting on
    // sockets, child processes, timers and the database rather than on the CPU, so three files
    // at once keep both cores busy without starving any one of them.
    maxWorkers: 3,
    // Without Vitest's cache (a clean clone), the files that take minutes start first.
    sequence: { sequencer: LongestFirst },
    // Package suites share one worker thread (the module graph is imported once, not once a
    // file: a clean-clone CI run took 918 s instead of 1,135); the pool reads this from the root
    // only. One thread beside the end-to-end processes: with three, a start of `npm start` under
    // tsx missed its 50 s on the 2-core machine. Processes stay isolated: shared ones grew to 3 GB over the
    // end-to-end files (decision 0041).
    poolOptions: { threads: { isolate: false, minThreads: 1, maxThreads: 1 } },
    minWorkers: 1,
    projects: [
      {
        extends: true,
        test: {
          name: "packages",
          pool: "threads",
          include: packageSuites,
          exclude: [...configDefaults.exclude, ...ownProcess],
          ...packageOptions
        }
      },
      {
        extends: true,
        test: {
          name: "packages-own-process",
          include: ownProcess,
          ...packageOptions
        }
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/**/*.test.ts"],
          setupFiles: ["./vitest.setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000
        }
      }
    ]
  }
})
