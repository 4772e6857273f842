/** Resend and replay (contract §5): their rules apart from storage; both start a fresh attempt cycle. @since 0.1.0 */
import * as Issue from "@waybill/core/Issue"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Retention from "./Retention.js"

/**
 * How far back a replay may reach by default: the default retention, 30 days (`since` older than
 * that is refused). The service takes the configured one, `Retention.Window`.
 * @since 0.1.0
 */
export const defaultRetentionSeconds = Retention.defaultRetentionMs / 1000

/** Deliveries a replay looks at per step (one statement, one short transaction on PostgreSQL). @since 0.1.0 */
export const defaultStepSize = 1_000

/**
 * The body of `POST /webhooks/{id}/replay`: the window `[since, until)` of event times, and which deliveries.
 * @since 0.1.0
 */
export const ReplayRequest = Schema.Struct({
  since: Schema.Int.annotations({ description: "Epoch seconds: events created at or after this" }),
  until: Schema.optional(Schema.Int.annotations({ description: "Epoch seconds: events created before this" })),
  status: Schema.optional(
    Schema.Literal("failed", "all").annotations({
      description: "failed (default): failed deliveries; all: failed and succeeded ones"
    })
  )
}).annotations({ identifier: "ReplayRequest" })

/** @since 0.1.0 */
export type ReplayRequest = typeof ReplayRequest.Encoded

/** The answer of a replay: how many deliveries went back to `pending`. @since 0.1.0 */
export const Replayed = Schema.Struct({ deliveries: Schema.Int }).annotations({ identifier: "Replayed" })

/** @since 0.1.0 */
export type Replayed = typeof Replayed.Type

/** A replay that passed every rule. @since 0.1.0 */
export interface ReplayWindow {
  readonly since: number
  readonly until: number
  readonly statuses: ReadonlyArray<"failed" | "succeeded">
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const known = new Set(["since", "until", "status"])

const epochSeconds = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0

/**
 * Checks a replay request against the clock and the retention (in seconds; 0 keeps everything, so
 * `since` has no lower bound), listing every issue. `until` defaults to one second past now, so
 * events of this second count.
 * @since 0.1.0
 */
export const validate = (
  input: unknown,
  nowSeconds: number,
  retentionSeconds: number = defaultRetentionSeconds
): Either.Either<ReplayWindow, ReadonlyArray<Issue.Issue>> => {
  if (!isRecord(input)) return Either.left([Issue.make("", "must be an object with since (epoch seconds)")])
  const issues: Array<Issue.Issue> = []
  for (const key of Object.keys(input)) {
    if (!known.has(key)) issues.push(Issue.make(key, "is not a field of a replay"))
  }
  const { since, until, status } = input
  const oldest = Math.ceil(nowSeconds - retentionSeconds)
  if (since === undefined) issues.push(Issue.make("since", "is required"))
  else if (!epochSeconds(since)) issues.push(Issue.make("since", "must be an integer epoch second"))
  else if (retentionSeconds > 0 && since < oldest) {
    issues.push(
      Issue.make(
        "since",
        `must not be older than the retention of ${Retention.format(retentionSeconds * 1000)} (${oldest})`
      )
    )
  }
  if (until !== undefined) {
    if (!epochSeconds(until)) issues.push(Issue.make("until", "must be an integer epoch second"))
    else if (epochSeconds(since) && until <= since) issues.push(Issue.make("until", "must be after since"))
  }
  if (status !== undefined && status !== "failed" && status !== "all") {
    issues.push(Issue.make("status", "must be failed or all"))
  }
  if (issues.length > 0) return Either.left(issues)
  return Either.right({
    since: since as number,
    until: (until as number | undefined) ?? nowSeconds + 1,
    statuses: status === "all" ? ["failed", "succeeded"] : ["failed"]
  })
}

/** No delivery with this id belongs to the webhook in the caller's workspace (404). @since 0.1.0 */
export class DeliveryNotFound extends Schema.TaggedError<DeliveryNotFound>("@waybill/webhooks/DeliveryNotFound")(
  "DeliveryNotFound",
  { deliveryId: Schema.String, message: Schema.String }
) {
  /** @since 0.1.0 */
  static of(deliveryId: string): DeliveryNotFound {
    return new DeliveryNotFound({
      deliveryId,
      message: `No delivery with id ${JSON.stringify(deliveryId)} exists for this webhook.`
    })
  }
}

/** The delivery is pending already (a resend would send it twice) or held (409 `conflict`). @since 0.1.0 */
export class DeliveryPending extends Schema.TaggedError<DeliveryPending>("@waybill/webhooks/DeliveryPending")(
  "DeliveryPending",
  { deliveryId: Schema.String, message: Schema.String }
) {
  /** @since 0.1.0 */
  static of(deliveryId: string, held = false): DeliveryPending {
    return new DeliveryPending({
      deliveryId,
      message: held
        ? `The delivery ${JSON.stringify(deliveryId)} is held while its webhook is disabled; enabling the webhook sends it, in event order.`
        : `The delivery ${JSON.stringify(deliveryId)} is pending already; resend it once it has succeeded or failed.`
    })
  }
}
