/**
 * A test run in the JSON log format (contract §8, "Logs"): `WAYBILL_LOG_FORMAT=json npm test`
 * hands the format to every Waybill process and `Waybill.make` the run starts, and each checks
 * what they wrote: every line one JSON record. `test/json-logs-reporter.ts` checks what reaches
 * the run's own console. The one exception is `docs.test.ts`, which follows the guides in a
 * reader's terminal: there the server prints its development key, which a JSON log never holds.
 */

/** Whether this run asks for JSON logs. */
export const jsonRun = process.env.WAYBILL_LOG_FORMAT === "json"

/** The variables that carry the run's log format to a process or `Waybill.make` (none for text). */
export const runLogFormat: Readonly<Record<string, string>> = jsonRun ? { WAYBILL_LOG_FORMAT: "json" } : {}

/** The lines of `output` that are not one JSON record with `timestamp`, `level` and `message`. */
export const notJsonRecords = (output: ReadonlyArray<string>): Array<string> =>
  output.filter((line) => {
    if (line === "") return false
    try {
      const record = JSON.parse(line) as Record<string, unknown>
      return !(typeof record.timestamp === "string" && typeof record.level === "string" && "message" in record)
    } catch {
      return true
    }
  })

/**
 * When `format` (the run's by default) is `json`, fails with the lines of `output` (text or
 * lines) that are not JSON records, naming `what` wrote them; otherwise does nothing.
 */
export const assertJsonLogs = (
  output: string | ReadonlyArray<string>,
  what: string,
  format: string | undefined = runLogFormat.WAYBILL_LOG_FORMAT
): void => {
  if (format !== "json") return
  const bad = notJsonRecords(typeof output === "string" ? output.split("\n") : output)
  if (bad.length > 0) {
    throw new Error(`${what}: lines that are not JSON records under WAYBILL_LOG_FORMAT=json:\n${bad.join("\n")}`)
  }
}

/**
 * Prints a test's own report (what a suite measured) on the run's console: as it is in a text
 * run, as one JSON record with the report as its message in a JSON run.
 */
export const report = (message: string): void =>
  console.log(jsonRun ? JSON.stringify({ timestamp: new Date().toISOString(), level: "info", message }) : message)
