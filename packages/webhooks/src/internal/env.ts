/** What the engine's modules are given: the ports, the settings, and how to attempt and log. */
import type { Transactor } from "@waybill/core/Transactor"
import type * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import type { DeliveryStore } from "../DeliveryStore.js"
import type { FailureAlerts } from "../FailureAlerts.js"
import type { OutboxReader } from "../OutboxReader.js"
import type { WebhookRepository } from "../WebhookRepository.js"
import type { AttemptOne } from "./attempts.js"
import type { Matcher } from "./matching.js"
import type { Settings } from "./settings.js"
import type * as Signal from "./signal.js"

export interface Env {
  readonly settings: Settings
  readonly outbox: OutboxReader["Type"]
  readonly store: DeliveryStore["Type"]
  readonly alerts: FailureAlerts["Type"]
  readonly repository: WebhookRepository["Type"]
  readonly transactor: Transactor["Type"]
  readonly matcher: Matcher
  readonly attemptOne: AttemptOne
  readonly deliverWake: Signal.Signal
  readonly logWriteFailure: (message: string, cause: Cause.Cause<unknown>) => Effect.Effect<void>
}
