/** @since 0.1.0 */

/** API keys: issue, hash, authenticate in constant time. @since 0.1.0 */
export * as ApiKeys from "./ApiKeys.js"

/** Whether the storage behind the ports can be reached. @since 0.1.0 */
export * as Availability from "./Availability.js"

/** The proleptic Gregorian calendar as day numbers, and the UTC offsets of IANA time zones. @since 0.1.0 */
export * as Calendar from "./Calendar.js"

/** Console tokens: scoped, expiring, revocable access to the console of one workspace. @since 0.3.0 */
export * as ConsoleTokens from "./ConsoleTokens.js"

/** Opaque list cursors. @since 0.1.0 */
export * as Cursor from "./Cursor.js"
/** Opaque, time-sortable identifiers with a type prefix. @since 0.1.0 */
export * as Id from "./Id.js"
/** Idempotent requests: keys, fingerprints, kept answers, the store port. @since 0.1.0 */
export * as Idempotency from "./Idempotency.js"

/** The storage port of idempotent requests' kept answers, its in-memory adapter and sweep. @since 0.2.0 */
export * as IdempotencyStore from "./IdempotencyStore.js"
/** Validation issues with dotted paths. @since 0.1.0 */
export * as Issue from "./Issue.js"
/** The nesting limit of JSON input. @since 0.1.0 */
export * as JsonDepth from "./JsonDepth.js"

/** JSON from outside checked in one walk: nesting, reserved keys, finite numbers, storable text. @since 0.1.0 */
export * as JsonInput from "./JsonInput.js"

/** Text that can be stored: no NUL characters, no unpaired surrogates. @since 0.1.0 */
export * as JsonText from "./JsonText.js"

/** Waybill's metric series, declared with Effect's `Metric`. @since 0.1.0 */
export * as Metrics from "./Metrics.js"

/** The Prometheus text format of Effect's metric registry. @since 0.1.0 */
export * as PrometheusText from "./PrometheusText.js"

/** Cryptographically strong random bytes from a pool. @since 0.1.0 */
export * as RandomBytes from "./RandomBytes.js"

/** What an in-memory adapter has recorded, read back in order. @since 0.1.0 */
export * as Recorded from "./Recorded.js"

/** Whether the process is stopping: readiness answers 503 from the first moment of a stop. @since 0.3.0 */
export * as Stopping from "./Stopping.js"

/** W3C Trace Context headers. @since 0.1.0 */
export * as TraceContext from "./TraceContext.js"

/** Spans on hot paths, made only when a tracer is on. @since 0.1.0 */
export * as Tracing from "./Tracing.js"

/** The unit-of-work port. @since 0.1.0 */
export * as Transactor from "./Transactor.js"

/** The error every validator fails with. @since 0.1.0 */
export * as ValidationError from "./ValidationError.js"

/** Workspaces (tenants). @since 0.1.0 */
export * as Workspace from "./Workspace.js"
