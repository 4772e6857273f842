/**
 * What a refused in-process call rejects with: the HTTP error body of the same refusal (contract
 * §1 and §9), as an `Error` a Promise-world host can catch and read.
 * @since 0.3.0
 */
import type { Issue } from "@waybill/core/Issue"
import { codeForStatus } from "./ApiError.js"

/** A refusal of the in-process API: `status`, `code`, `message` and `issues` as the HTTP route answers them. @since 0.3.0 */
export class WaybillError extends Error {
  /** The HTTP status the same refusal gets over HTTP (400, 404, 409, …). */
  readonly status: number
  /** The contract's error code (`bad_request`, `not_found`, `invalid_transition`, …). */
  readonly code: string
  /** Every problem found, each at its path. */
  readonly issues: ReadonlyArray<Issue>

  constructor(body: {
    readonly status: number
    readonly code?: string | undefined
    readonly message: string
    readonly issues?: ReadonlyArray<Issue> | undefined
  }) {
    super(body.message)
    this.name = "WaybillError"
    this.status = body.status
    this.code = body.code ?? codeForStatus(body.status)
    this.issues = body.issues ?? []
  }

  /** The HTTP error body: what `JSON.stringify` writes for the error. */
  toJSON(): { readonly code: string; readonly message: string; readonly issues: ReadonlyArray<Issue> } {
    return { code: this.code, message: this.message, issues: this.issues }
  }
}

/** Whether a value is a `WaybillError` (also across copies of this package). @since 0.3.0 */
export const isWaybillError = (value: unknown): value is WaybillError =>
  value instanceof WaybillError || (value instanceof Error && value.name === "WaybillError" && "status" in value)
