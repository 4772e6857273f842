/**
 * `close()` of `Waybill.make` stops as the reference server does (contract §8, "Shutdown"), here on
 * the embedded database: readiness answers 503 from the first moment while other routes still
 * answer, the attempt in flight is awaited and recorded, and one line says so.
 */
import { rm } from "node:fs/promises"
import { assert, describe, it } from "@effect/vitest"
import * as Waybill from "@waybill/server/Waybill"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Logger } from "effect"
import { eventually, receiver } from "./receivers.js"

const key = "shutdown-key-0001"

describe("Waybill.make close()", () => {
  it.live(
    "answers 503 at /health/ready at once, awaits the attempt in flight and records it, in one line",
    () =>
      Effect.gen(function* () {
        const target = yield* receiver(() => ({ status: 200, delayMs: 1_500 }))
        const dataDir = yield* Effect.acquireRelease(
          Effect.promise(() => Testing.makeDataDir("waybill-shutdown-")),
          (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
        )
        const lines: Array<string> = []
        const env = {
          WAYBILL_API_KEYS: `acme:${key}`,
          WAYBILL_DATA_DIR: dataDir,
          WAYBILL_ALLOW_PRIVATE_TARGETS: "true",
          WAYBILL_SHUTDOWN_GRACE_MS: "5000"
        }
        const logger = Logger.map(Logger.logfmtLogger, (line) => {
          lines.push(line)
        })
        const waybill = yield* Effect.promise(() => Waybill.make({ env, logger }))
        const acme = waybill.forWorkspace("acme")
        const webhook = yield* Effect.promise(() =>
          acme.webhooks.create({
            url: target.url,
            events: ["tour-created"],
            auth: { type: "bearer", token: "a-receiver-token-0001" }
          })
        )
        const event = yield* Effect.promise(() =>
          acme.events.publish({
            type: "tour-created",
            payload: { tour: { id: "tour_stop", status: "planned", substatus: null, properties: {} } }
          })
        )
        yield* eventually(
          Effect.sync(() => target.received.length === 1),
          "the attempt in flight"
        )
        const get = (path: string) =>
          waybill.handler(new Request(`http://host${path}`, { headers: { authorization: `Bearer ${key}` } }))
        assert.strictEqual((yield* Effect.promise(() => get("/health/ready"))).status, 200)
        const closing = waybill.close()
        assert.strictEqual((yield* Effect.promise(() => get("/health/ready"))).status, 503)
        assert.strictEqual((yield* Effect.promise(() => get("/webhooks"))).status, 200)
        yield* Effect.promise(() => closing)
        const stopped = lines.filter((line) => line.includes("Deliveries stopped"))
        assert.strictEqual(stopped.length, 1, lines.join("\n"))
        assert.include(stopped[0], "1 attempts finished while stopping, 0 deliveries released (0 cut short)")
        assert.strictEqual(target.received[0]!.answeredAt !== undefined, true)
        // Recorded before the database closed: the next start finds it ended, nothing to send again.
        const reopened = yield* Effect.acquireRelease(
          Effect.promise(() => Waybill.make({ env, logger })),
          (again) => Effect.promise(() => again.close())
        )
        const log = yield* Effect.promise(() => reopened.forWorkspace("acme").webhooks.deliveries(webhook.id, {}))
        assert.deepStrictEqual(
          log.data.map((delivery) => [delivery.eventId, delivery.status, delivery.attempts.length]),
          [[event.id, "succeeded", 1]]
        )
        yield* Effect.sleep("300 millis")
        assert.strictEqual(target.received.length, 1)
      }).pipe(Effect.scoped),
    60_000
  )
})
