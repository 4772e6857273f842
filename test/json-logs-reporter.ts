/**
 * In a JSON run (`WAYBILL_LOG_FORMAT=json npm test`), every line that reaches the run's console
 * from a test file (what `Waybill.make` logs in process, and anything else printed) must be a
 * JSON record; the lines that are not are listed at the end and fail the run. Added to the
 * reporters by `vitest.config.ts` in such a run only.
 */
import type { UserConsoleLog } from "vitest"
import type { Reporter } from "vitest/node"
import { notJsonRecords } from "./json-logs.js"

/** Collects the console's lines and fails the run on any that is not a JSON record. */
export default class JsonLogsReporter implements Reporter {
  private readonly bad: Array<string> = []

  onUserConsoleLog(log: UserConsoleLog): void {
    const where = log.taskId === undefined ? "" : ` (task ${log.taskId})`
    for (const line of notJsonRecords(log.content.split("\n"))) this.bad.push(`${log.type}${where}: ${line}`)
  }

  onTestRunEnd(): void {
    if (this.bad.length === 0) {
      console.log("\nWAYBILL_LOG_FORMAT=json: every line on the run's console is a JSON record")
      return
    }
    console.error(
      `\nWAYBILL_LOG_FORMAT=json: ${this.bad.length} lines on the run's console are not JSON records:\n${this.bad.join("\n")}`
    )
    process.exitCode = 1
  }
}
