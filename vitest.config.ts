import { defaultClientConditions, defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"
import { LongestFirst } from "./test/sequencer.js"

// Inside the workspace, `@waybill/*` imports resolve to the TypeScript sources (the
// `@waybill/source` export condition), never to a build that may be stale.
const source = "@waybill/source"

// One project for the pure and storage packages, one for end-to-end tests over real HTTP.
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
    // Each file runs in a process of its own (Vitest's default). Shared processes (a root
    // `isolate: false`; a project's own setting does not reach the pool) grew each worker to
    // 3 GB over the end-to-end files and ended the run (decision 0041).
    // Without Vitest's cache (a clean clone), the files that take minutes start first.
    sequence: { sequencer: LongestFirst },
    minWorkers: 1,
    projects: [
      {
        extends: true,
        test: {
          name: "packages",
          include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
          setupFiles: ["./vitest.setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000
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
