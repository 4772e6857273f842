/**
 * The dispatcher's settings, resolved from its options with their defaults (in `Dispatcher`),
 * and the windows (how much work a delivery loop holds) derived from them.
 */

/** Every dispatcher setting, resolved; see `Dispatcher.Options` for each. */
export interface Settings {
  readonly timeoutMs: number
  readonly retryDelayMs: number
  readonly retryJitter: number
  readonly concurrency: number
  readonly perWebhookConcurrency: number
  readonly leaseMs: number
  readonly pollIntervalMs: number
  readonly fanOutBatchSize: number
  readonly completionBatchSize: number
  readonly recordDelayMs: number
  /** Deliveries in a row ended `failed` after which a webhook is disabled; 0: never. */
  readonly disableAfterFailures: number
  readonly fanOutGapMs: number
  /** A read that found this many events or more tells fan-out events arrive fast. */
  readonly busyRead: number
  /** The longest fan-out waits before looking again for events behind an open transaction. */
  readonly waitingMaxMs: number
  /** What one webhook may hold in a loop, in flight and waiting: `2 × perWebhookConcurrency`. */
  readonly perWebhookWindow: number
  /** What fan-out may hand one webhook while the loop has room to spare: fewer, larger reads. */
  readonly handOffWindow: number
  /** What a loop holds at most, in flight and waiting: `2 × concurrency`. */
  readonly window: number
  /** Results waiting to be written beyond which a loop claims no more. */
  readonly maxUnwritten: number
}
