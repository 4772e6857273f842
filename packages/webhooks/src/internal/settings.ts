/**
 * The dispatcher's settings, resolved from its options with their defaults, and the windows
 * (how much work a delivery loop holds) derived from them.
 */
import type { Options } from "../Dispatcher.js"

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
  readonly fanOutGapMs: number
  /** A read that found this many events or more tells fan-out events arrive fast. */
  readonly busyRead: number
  /** What one webhook may hold in a loop, in flight and waiting: `2 × perWebhookConcurrency`. */
  readonly perWebhookWindow: number
  /** What fan-out may hand one webhook while the loop has room to spare: fewer, larger reads. */
  readonly handOffWindow: number
  /** What a loop holds at most, in flight and waiting: `2 × concurrency`. */
  readonly window: number
  /** Results waiting to be written beyond which a loop claims no more. */
  readonly maxUnwritten: number
}

const positive = (value: number | undefined, fallback: number) =>
  value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback

/** Resolves the options: defaults for what is missing or not a positive number. */
export const settingsOf = (options: Options): Settings => {
  const timeoutMs = positive(options.timeoutMs, 20_000)
  const concurrency = Math.floor(positive(options.concurrency, 128))
  const perWebhookConcurrency = Math.min(concurrency, Math.floor(positive(options.perWebhookConcurrency, 32)))
  const completionBatchSize = Math.floor(positive(options.completionBatchSize, 256))
  return {
    timeoutMs,
    retryDelayMs: positive(options.retryDelayMs, 10_000),
    retryJitter: Math.min(0.2, Math.max(0, options.retryJitter ?? 0.2)),
    concurrency,
    perWebhookConcurrency,
    // A lease shorter than an attempt would let a second dispatcher send while the first waits.
    leaseMs: Math.max(positive(options.leaseMs, timeoutMs + 30_000), timeoutMs + 5_000),
    pollIntervalMs: positive(options.pollIntervalMs, 1_000),
    fanOutBatchSize: Math.floor(positive(options.fanOutBatchSize, 256)),
    completionBatchSize,
    recordDelayMs: positive(options.recordDelayMs, 100),
    fanOutGapMs: positive(options.fanOutGapMs, 20),
    busyRead: 8,
    perWebhookWindow: 2 * perWebhookConcurrency,
    handOffWindow: 4 * perWebhookConcurrency,
    window: 2 * concurrency,
    maxUnwritten: 2 * completionBatchSize
  }
}
