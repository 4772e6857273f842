/**
 * What the server and the keys tool say when they cannot start: one line naming the setting and
 * the cause, never a stack trace or a secret.
 * @since 0.1.0
 */

import * as Database from "@waybill/store-pg/Database"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { databaseConfig, describeError, type ServerConfig } from "./Config.js"
import { ReferenceDataError } from "./ReferenceDataFile.js"

/**
 * The keys tool's command where this code runs: `npm run keys --` from this repository's sources,
 * `npx waybill-keys` where the package is installed (a host has no `keys` script).
 * @since 0.2.0
 */
export const keysCommand: string = import.meta.url.endsWith(".ts") ? "npm run keys --" : "npx waybill-keys"

const hasTag = (value: unknown, tag: string): value is { readonly _tag: string; readonly message: string } =>
  typeof value === "object" && value !== null && (value as { readonly _tag?: unknown })._tag === tag

// The driver's error under an effect/sql error (the pg driver never quotes passwords).
const rootCause = (error: unknown): { readonly message: string; readonly code?: string } => {
  let current: unknown = error
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null && "cause" in current; depth++) {
    const next = (current as { readonly cause?: unknown }).cause
    if (next === undefined) break
    current = next
  }
  if (current instanceof AggregateError && current.errors.length > 0) current = current.errors[0]
  if (current instanceof Error) {
    const code = (current as NodeJS.ErrnoException).code
    return code === undefined ? { message: current.message } : { message: current.message, code }
  }
  return { message: String(current) }
}

const databaseHint = (
  { code, message }: { readonly message: string; readonly code?: string },
  settings: ServerConfig
) => {
  if (code === "3D000" && settings.database._tag === "Postgres") {
    const name = new URL(Redacted.value(settings.database.url)).pathname.slice(1)
    return ` (create it with: createdb ${decodeURIComponent(name)})`
  }
  if (code === "ECONNREFUSED") return " (is PostgreSQL running there?)"
  // The driver's connect deadline (store-pg's Database) ends a connection that never answered.
  if (/timeout|terminated/i.test(message))
    return " (no PostgreSQL answer within 5 s: is that address a PostgreSQL server?)"
  return ""
}

/** The database a configuration uses, without credentials: `PostgreSQL at host:5432/name`. @since 0.1.0 */
export const describeDatabase = (settings: ServerConfig): string =>
  Database.describe(databaseConfig(settings), Option.getOrUndefined(Option.map(settings.databaseUrl, Redacted.value)))

/**
 * One line for a failure the operator can fix, or `None` for a bug, whose whole cause is worth printing.
 * @since 0.1.0
 */
export const describeFailure = (error: unknown, settings?: ServerConfig): Option.Option<string> => {
  if (ConfigError.isConfigError(error)) {
    return Option.some(`Configuration error (nothing was started): ${describeError(error).join("; ")}`)
  }
  if (error instanceof ReferenceDataError) {
    return Option.some(`WAYBILL_REFERENCE_DATA: ${error.path}: ${error.problems.join("; ")}`)
  }
  // Both are about the embedded database's directory (a PostgreSQL key comes from the config).
  if (hasTag(error, "DataDirLockError") || hasTag(error, "SecretKeyError")) {
    return Option.some(`WAYBILL_DATA_DIR: ${error.message}`)
  }
  if (error instanceof Database.EmbeddedStartError) return Option.some(error.message)
  if ((hasTag(error, "SqlError") || hasTag(error, "MigrationError")) && settings !== undefined) {
    const variable = settings.database._tag === "Postgres" ? "DATABASE_URL" : "WAYBILL_DATA_DIR"
    if (hasTag(error, "MigrationError")) {
      return Option.some(`${variable}: cannot migrate ${describeDatabase(settings)}: ${error.message}`)
    }
    const cause = rootCause(error)
    return Option.some(
      `${variable}: cannot use ${describeDatabase(settings)}: ${cause.message}${databaseHint(cause, settings)}`
    )
  }
  if (hasTag(error, "ServeError") && settings !== undefined) {
    const cause = rootCause(error)
    const address = `${settings.host}:${settings.port}`
    if (cause.code === "EADDRINUSE") {
      return Option.some(`PORT: ${address} is already in use (EADDRINUSE); stop the other server or set another PORT`)
    }
    if (cause.code === "EACCES") return Option.some(`PORT: not allowed to listen on ${address} (EACCES)`)
    if (cause.code === "EADDRNOTAVAIL") return Option.some(`HOST: ${settings.host} is not an address of this machine`)
    return Option.some(`Cannot listen on ${address}: ${cause.message}`)
  }
  return Option.none()
}

/** The failure of a startup, for the log: one line when the operator can fix it, else the cause. @since 0.1.0 */
export const report = (cause: Cause.Cause<unknown>, settings?: ServerConfig): string =>
  Option.getOrElse(
    Option.flatMap(Cause.failureOption(cause), (error) => describeFailure(error, settings)),
    () => Cause.pretty(cause)
  )

/**
 * Logs the failure of a startup as one ERROR record: the line `report` gives when the operator can
 * fix it, else a message with the cause as the record's cause (a field, never lines of its own).
 * @since 0.3.0
 */
export const logFailure = (cause: Cause.Cause<unknown>, settings?: ServerConfig): Effect.Effect<void> =>
  Option.match(
    Option.flatMap(Cause.failureOption(cause), (error) => describeFailure(error, settings)),
    {
      onNone: () => Effect.logError("Waybill stopped on an unexpected failure", cause),
      onSome: (line) => Effect.logError(line)
    }
  )
