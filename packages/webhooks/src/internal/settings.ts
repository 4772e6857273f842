/** The dispatcher's settings, resolved (see `Dispatcher.Options`), and the windows derived from them. */
export interface Settings {
  readonly timeoutMs: number
  readonly retryDelayMs: number
  readonly retryJitter: number
  readonly concurrency: number
  readonly perWebhookConcurrency: number
  readonly leaseMs: number
  /** How often held claims are renewed: a third of the lease. */
  readonly renewEveryMs: number
  /** How long a stop awaits attempts in flight. */
  readonly shutdownGraceMs: number
  readonly pollIntervalMs: number
  readonly fanOutBatchSize: number
  readonly completionBatchSize: number
  readonly recordDelayMs: number
  readonly disableAfterFailures: number
  readonly fanOutGapMs: number
  /** A read that found this many events or more tells fan-out events arrive fast. */
  readonly busyRead: number
  readonly waitingMaxMs: number
  /** What one webhook, and a loop in all, may hold in flight and waiting (twice the concurrency). */
  readonly perWebhookWindow: number
  /** What fan-out may hand one webhook while the loop has room to spare: fewer, larger reads. */
  readonly handOffWindow: number
  readonly window: number
  /** Results waiting to be written beyond which a loop claims no more. */
  readonly maxUnwritten: number
}
