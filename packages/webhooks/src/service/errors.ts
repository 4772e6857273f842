// The webhook service's errors; `WebhookService` exports them.
import * as Schema from "effect/Schema"

/** No webhook with this id in the caller's workspace (404; another workspace's webhook looks the same). @since 0.1.0 */
export class WebhookNotFound extends Schema.TaggedError<WebhookNotFound>("@waybill/webhooks/WebhookNotFound")(
  "WebhookNotFound",
  { webhookId: Schema.String, message: Schema.String }
) {
  /** @since 0.1.0 */
  static of(webhookId: string): WebhookNotFound {
    return new WebhookNotFound({ webhookId, message: `No webhook with id ${JSON.stringify(webhookId)} exists.` })
  }
}

/**
 * The workspace already holds as many webhooks as it may (409 `conflict`): one event fans out to
 * at most that many.
 * @since 0.1.0
 */
export class WebhookLimitReached extends Schema.TaggedError<WebhookLimitReached>(
  "@waybill/webhooks/WebhookLimitReached"
)("WebhookLimitReached", { limit: Schema.Number, message: Schema.String }) {
  /** @since 0.1.0 */
  static of(limit: number): WebhookLimitReached {
    return new WebhookLimitReached({
      limit,
      message: `The workspace already has ${limit} webhooks, the most it may have; delete one before registering another.`
    })
  }
}
