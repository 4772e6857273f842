/**
 * Starts an example on a data directory of its own holding the test run's migrated database:
 * the default, `memory://`, would run PGlite's initdb in the test worker (seconds of CPU that
 * hold its event loop). The directories are removed after the file's tests.
 */
import { rm } from "node:fs/promises"
import { afterAll } from "@effect/vitest"
import * as Testing from "@waybill/store-pg/Testing"
import type { Running } from "../src/Main.js"

const dataDirs: Array<string> = []
afterAll(() => Promise.all(dataDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true }))))

/** The log format of the run (\`WAYBILL_LOG_FORMAT=json npm test\` checks every line of it), for the examples' variables. */
export const runLogFormat: Readonly<Record<string, string>> =
  process.env.WAYBILL_LOG_FORMAT === "json" ? { WAYBILL_LOG_FORMAT: "json" } : {}

/** `start(0, env)` with `WAYBILL_DATA_DIR` naming a copy of the migrated database, in the run's log format. */
export const startOnMigratedDatabase = async (
  start: (port: number, env: Record<string, string>) => Promise<Running>,
  env: Record<string, string>
) => {
  const dataDir = await Testing.makeDataDir("waybill-example-")
  dataDirs.push(dataDir)
  return start(0, { ...env, WAYBILL_DATA_DIR: dataDir, ...runLogFormat })
}
