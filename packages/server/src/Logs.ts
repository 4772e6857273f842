/**
 * The log of the reference server and `Waybill.make` (`WAYBILL_LOG_FORMAT`): Effect's logfmt
 * logger (`text`) or its structured logger as one JSON object per line (`json`). Either way a
 * record is one line: a cause or a detail is a field, never a line of its own (docs/operations.md, Logs).
 * @since 0.3.0
 */
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"

/** How records are written: `text` (logfmt, Effect's `Logger.logfmtLogger`) or `json`. @since 0.3.0 */
export type Format = "text" | "json"

// The contract's level names; Effect's TRACE is below them all and counts as debug.
const levels: Readonly<Record<string, string>> = {
  TRACE: "debug",
  DEBUG: "debug",
  INFO: "info",
  WARN: "warn",
  ERROR: "error",
  FATAL: "fatal"
}

const reserved = new Set(["timestamp", "level", "message"])

const textOf = (part: unknown): string =>
  typeof part === "string"
    ? part
    : part instanceof Error
      ? `${part.name}: ${part.message}`
      : Inspectable.toStringUnknown(part, 0)

/**
 * Effect's structured logger as one JSON object: `timestamp` (ISO 8601), `level` (`debug`, `info`,
 * `warn`, `error`, `fatal`), `message`, then the record's annotations as fields, and `cause`
 * (Effect's rendering of it) when the record has one.
 * @since 0.3.0
 */
export const jsonLogger: Logger.Logger<unknown, string> = Logger.map(Logger.structuredLogger, (record) => {
  const parts: ReadonlyArray<unknown> = Array.isArray(record.message) ? record.message : [record.message]
  const line: Record<string, unknown> = {
    timestamp: record.timestamp,
    level: levels[record.logLevel] ?? "info",
    message: parts.map(textOf).join(" ")
  }
  for (const [name, value] of Object.entries(record.annotations)) {
    if (!reserved.has(name)) line[name] = value
  }
  if (record.cause !== undefined) line.cause = record.cause
  return Inspectable.stringifyCircular(line)
})

/** The logger of a format: Effect's `logfmtLogger`, or `jsonLogger`. @since 0.3.0 */
export const loggerOf = (format: Format): Logger.Logger<unknown, string> =>
  format === "json" ? jsonLogger : Logger.logfmtLogger

/**
 * Replaces Effect's default logger with `logger`; with `level`, nothing less severe is logged.
 * @since 0.3.0
 */
export const layerWith = (
  logger: Logger.Logger<unknown, unknown>,
  level?: LogLevel.LogLevel | undefined
): Layer.Layer<never> => {
  const replaced = Logger.replace(Logger.defaultLogger, logger)
  return level === undefined ? replaced : Layer.merge(replaced, Logger.minimumLogLevel(level))
}

/** `layerWith` the format's logger, writing each record as one line to the console (stdout). @since 0.3.0 */
export const layer = (format: Format, level?: LogLevel.LogLevel | undefined): Layer.Layer<never> =>
  layerWith(Logger.withConsoleLog(loggerOf(format)), level)
