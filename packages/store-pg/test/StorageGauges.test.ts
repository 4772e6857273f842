import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import * as Metrics from "@waybill/core/Metrics"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventIntake from "@waybill/events/EventIntake"
import { DeliveryStore } from "@waybill/webhooks/DeliveryStore"
import { Dispatcher } from "@waybill/webhooks/Dispatcher"
import * as HttpSender from "@waybill/webhooks/HttpSender"
import { WebhookService } from "@waybill/webhooks/WebhookService"
import { Effect, Metric, Schema, TestClock } from "effect"
import * as StorageGauges from "../src/internal/storageGauges.js"
import * as PgMetrics from "../src/PgMetrics.js"
import * as Testing from "../src/Testing.js"
import { forEachBackend, webhookStack } from "./harness.js"

const NOW = 1_798_000_000_000
const workspace = Schema.decodeSync(WorkspaceId)("gauges")
const as = Effect.provideService(CurrentWorkspace, { id: workspace, apiKeyId: "k" })

const gauges = Effect.gen(function* () {
  yield* PgMetrics.refresh()
  return {
    pending: (yield* Metric.value(Metrics.deliveriesPending)).value,
    lagSeconds: (yield* Metric.value(Metrics.outboxLag)).value,
    up: (yield* Metric.value(Metrics.databaseUp)).value
  }
})

forEachBackend(
  "Storage gauges",
  webhookStack(HttpSender.layerScripted(() => Effect.succeed({ statusCode: 200 }))),
  (it) => {
    it.effect("count pending and held deliveries, and the age of the first event not fanned out", () =>
      Effect.gen(function* () {
        const service = yield* WebhookService
        const webhook = yield* as(
          service.register({
            url: "https://hooks.example.org/gauges",
            events: ["tour-created"],
            auth: { type: "bearer", token: "a-receiver-token" }
          })
        )
        yield* TestClock.setTime(NOW)
        for (const id of ["a", "b", "c"]) {
          yield* as(
            EventIntake.publish({
              type: "tour-created",
              payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
            })
          )
        }
        yield* Testing.eventsVisible
        yield* TestClock.setTime(NOW + 5_000)
        assert.deepStrictEqual(yield* gauges, { pending: 0, lagSeconds: 5, up: 1 })
        yield* Effect.flatMap(Dispatcher, (dispatcher) => dispatcher.fanOutAll)
        assert.deepStrictEqual(yield* gauges, { pending: 3, lagSeconds: 0, up: 1 })
        // A paused webhook's deliveries are held, and still open.
        yield* Effect.flatMap(DeliveryStore, (store) => store.hold(workspace, webhook.id, NOW + 5_000))
        assert.deepStrictEqual(yield* gauges, { pending: 3, lagSeconds: 0, up: 1 })
      })
    )

    // What a scrape costs must follow what is open, not every delivery and event ever stored:
    // with sequential scans priced out, the plan shows that none is needed.
    it.effect("are read through indexes: no scan of the deliveries or the events", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [text] = StorageGauges.read(sql).compile()
        const plan = yield* sql.withTransaction(
          Effect.zipRight(
            sql.unsafe("SET LOCAL enable_seqscan = off"),
            sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`)
          )
        )
        const lines = plan.map((row) => row["QUERY PLAN"]).join("\n")
        // Every time range of both tables (0018) read through an index; none scanned.
        const scans = lines.split("\n").filter((line) => / on (deliveries|events)\w* /.test(line))
        assert.isAbove(scans.length, 4, lines)
        for (const scan of scans) assert.match(scan, /-> {2}Index (Only )?Scan using /, lines)
        assert.match(lines, /Index Only Scan using deliveries_pending_idx_before|_webhook_id_due_at_seq_idx/)
        assert.match(lines, /Index Cond: \(ROW\(xid, seq\) > ROW\(f\.xid, f\.seq\)\)/)
      })
    )
  }
)
