/** The `Availability` port: a `SqlError` caused by a connection failure, not a refused statement. */
import type * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type { Availability } from "@waybill/core/Availability"
import * as Effect from "effect/Effect"

// Socket-level failures (Node) and PostgreSQL's connection exception (08…) and operator
// intervention (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now) classes.
const socketCodes: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH"
])
const isOutageCode = (code: unknown) =>
  typeof code === "string" &&
  (socketCodes.has(code) || code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03")

const outageMessage =
  /Connection terminated|Connection timed out|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|connect ECONNREFUSED/i

/** Whether a defect is a `SqlError` caused by the database being unreachable. */
export const isOutage = (defect: unknown): boolean => {
  if (!(defect instanceof SqlError)) return false
  let cause: unknown = defect.cause
  for (let depth = 0; depth < 5 && typeof cause === "object" && cause !== null; depth++) {
    const { code, message } = cause as { readonly code?: unknown; readonly message?: unknown }
    if (isOutageCode(code) || (typeof message === "string" && outageMessage.test(message))) return true
    cause = (cause as { readonly cause?: unknown }).cause
  }
  return false
}

/** The port over a client: a `SELECT 1` answered within two seconds means available. */
export const make = (sql: SqlClient.SqlClient): Availability["Type"] => ({
  check: sql`SELECT 1`.pipe(
    Effect.as(true),
    Effect.timeoutTo({ duration: "2 seconds", onSuccess: (ok) => ok, onTimeout: () => false }),
    Effect.catchAllCause(() => Effect.succeed(false))
  ),
  isOutage
})
