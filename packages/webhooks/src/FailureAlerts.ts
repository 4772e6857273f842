/**
 * Failure alerts (contract §5): raised when a delivery's retry fails too; an embedder may page someone instead.
 * @since 0.1.0
 */
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Page from "./Page.js"

/** An alert as `GET /alerts` lists it; `reason` is a sentence without secrets. @since 0.1.0 */
export const FailureAlert = Schema.Struct({
  id: Schema.String,
  webhookId: Schema.String,
  deliveryId: Schema.String,
  eventId: Schema.String,
  eventType: Schema.String,
  reason: Schema.String,
  createdAt: Schema.Int
}).annotations({ identifier: "FailureAlert" })

/** @since 0.1.0 */
export type FailureAlert = typeof FailureAlert.Type

/** What `list` takes: an optional webhook id and the page. @since 0.1.0 */
export interface ListQuery extends Page.Query {
  readonly webhookId: string | undefined
}

/** @since 0.1.0 */
export class FailureAlerts extends Context.Tag("@waybill/webhooks/FailureAlerts")<
  FailureAlerts,
  {
    readonly raise: (workspaceId: WorkspaceId, alert: FailureAlert) => Effect.Effect<void>
    /** Newest first (by id). */
    readonly list: (workspaceId: WorkspaceId, query: ListQuery) => Effect.Effect<Page.Page<FailureAlert>>
  }
>() {}

/** An in-memory store of alerts. @since 0.1.0 */
export const makeMemory = (): FailureAlerts["Type"] => {
  const alerts: Array<{ readonly workspaceId: WorkspaceId; readonly alert: FailureAlert }> = []
  return FailureAlerts.of({
    raise: (workspaceId, alert) => Effect.sync(() => void alerts.push({ workspaceId, alert })),
    list: (workspaceId, query) =>
      Effect.sync(() => {
        const rows = alerts
          .filter(
            (entry) =>
              entry.workspaceId === workspaceId &&
              (query.webhookId === undefined || entry.alert.webhookId === query.webhookId) &&
              (query.after === undefined || entry.alert.id < query.after)
          )
          .map((entry) => entry.alert)
          .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
          .slice(0, query.limit + 1)
        return Page.make("alr", rows, query.limit, (alert) => alert.id)
      })
  })
}

/** An in-memory layer, for tests and embedders without storage. @since 0.1.0 */
export const layerMemory: Layer.Layer<FailureAlerts> = Layer.sync(FailureAlerts, makeMemory)
