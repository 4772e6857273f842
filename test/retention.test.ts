/**
 * Retention over HTTP (contract §8): with `WAYBILL_RETENTION=1m`, a held delivery says when it
 * expires, replay reaches back no further than the window, and once its event passes the window
 * the delivery ends expired (counted, one alert) and is removed with its event, on the reference
 * server and the Express host, on PGlite and PostgreSQL.
 */
import { assert } from "@effect/vitest"
import * as Id from "@waybill/core/Id"
import * as AdjustableClock from "@waybill/server/AdjustableClock"
import { Effect, Option, Redacted } from "effect"
import { call, forEachServer, keys } from "./harness.js"
import { eventually, receiver } from "./receivers.js"

const clock = AdjustableClock.make()
const retentionMs = 60_000

const api = (path: string, options: Parameters<typeof call>[1] = {}) => call(path, { key: keys.a, ...options })

const metricsToken = "retention-metrics-token-0001"

// One series' value as `GET /metrics` shows it (0 when absent); undefined where the host serves
// no `/metrics` (the Express host leaves metrics to its own routes).
const scraped = (series: string) =>
  Effect.map(call("/metrics", { headers: { authorization: `Bearer ${metricsToken}` } }), (reply) => {
    if (reply.status === 404) return undefined
    const line = reply.text.split("\n").find((text) => text.startsWith(`${series} `))
    return line === undefined ? 0 : Number(line.slice(series.length + 1))
  })

forEachServer(
  "retention",
  (it) => {
    it.scoped(
      "a held delivery says when it expires, then ends expired with one alert and is removed with its event",
      () =>
        Effect.gen(function* () {
          const target = yield* receiver()
          const created = yield* api("/webhooks", {
            json: { url: target.url, events: ["tour-created"], auth: { type: "bearer", token: "t" } }
          })
          assert.strictEqual(created.status, 201, created.text)
          const webhookId: string = created.body.id
          yield* api(`/webhooks/${webhookId}/disable`, { method: "POST" })
          const published = yield* api("/events", {
            json: {
              type: "tour-created",
              payload: { tour: { id: "tour_expiring", status: "planned", substatus: null, properties: {} } }
            }
          })
          assert.strictEqual(published.status, 202, published.text)
          yield* eventually(
            Effect.map(api(`/webhooks/${webhookId}/deliveries`), (log) => log.body.data.length === 1),
            "the held delivery"
          )
          const [held] = (yield* api(`/webhooks/${webhookId}/deliveries`)).body.data
          assert.strictEqual(held.status, "held")
          const shown = yield* api(`/webhooks/${webhookId}`)
          assert.strictEqual(
            shown.body.oldestHeldExpiresAt,
            Math.floor((Option.getOrThrow(Id.timeOf(held.id)) + retentionMs) / 1000)
          )
          // Replay reaches back as far as the retention, no further.
          const now = Math.floor(clock.unsafeCurrentTimeMillis() / 1000)
          const tooOld = yield* api(`/webhooks/${webhookId}/replay`, { json: { since: now - 90 } })
          assert.strictEqual(tooOld.status, 400, tooOld.text)
          assert.strictEqual(tooOld.body.issues[0].path, "since")
          assert.match(tooOld.body.issues[0].message, /retention of 1m/)
          assert.strictEqual((yield* api(`/webhooks/${webhookId}/replay`, { json: { since: now - 30 } })).status, 202)

          const expiredBefore = yield* scraped('waybill_deliveries_total{status="expired"}')
          const eventsBefore = yield* scraped('waybill_retention_removed_total{kind="events"}')
          // Past the contract's bound (a tenth of the window and a minute: the first ranges after a
          // migration are a minute long): the next removal run, within 6 s.
          yield* clock.adjust(retentionMs + retentionMs / 10 + 61_000)
          yield* eventually(
            Effect.map(api(`/alerts?webhookId=${webhookId}`), (reply) => reply.body.data.length === 1),
            "the expiry alert",
            30_000
          )
          const [alert] = (yield* api(`/alerts?webhookId=${webhookId}`)).body.data
          assert.deepStrictEqual(
            [alert.reason, alert.deliveryId, alert.eventId],
            ["expired: 1 delivery not delivered within the retention of 1m", held.id, published.body.id]
          )
          const after = yield* api(`/webhooks/${webhookId}/deliveries`)
          assert.deepStrictEqual(after.body.data, [], after.text)
          assert.isFalse("oldestHeldExpiresAt" in (yield* api(`/webhooks/${webhookId}`)).body)
          // The run counts once it has dropped what it removes, a moment after the alert.
          yield* eventually(
            Effect.map(
              scraped('waybill_deliveries_total{status="expired"}'),
              (expired) => expired === undefined || expired - (expiredBefore ?? 0) === 1
            ),
            "the expiry counted"
          )
          const eventsAfter = yield* scraped('waybill_retention_removed_total{kind="events"}')
          if (eventsAfter !== undefined) assert.isAtLeast(eventsAfter - (eventsBefore ?? 0), 1)
          // Nothing expired is sent when the webhook comes back.
          yield* api(`/webhooks/${webhookId}/enable`, { method: "POST" })
          yield* Effect.sleep("300 millis")
          assert.strictEqual(target.received.length, 0)
        })
    )
  },
  { retentionMs, metricsToken: Redacted.make(metricsToken) },
  { clock }
)
