/**
 * `Waybill.make` logs as the server does: `WAYBILL_LOG_FORMAT=json` makes each record one JSON
 * line on the console (a delivery refused here: its attempts with the contract's fields), and a
 * host's own `logger` receives the records instead.
 */
import { rm } from "node:fs/promises"
import { afterAll, assert, describe, it, vi } from "@effect/vitest"
import * as Testing from "@waybill/store-pg/Testing"
import { Logger } from "effect"
import * as Waybill from "../src/Waybill.js"

const directories: Array<string> = []
afterAll(() => Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true }))))

/** The variables, with a data directory of its own holding the run's migrated database (no initdb). */
const variables = async (extra: Record<string, string> = {}) => {
  const dataDir = await Testing.makeDataDir("waybill-embedded-logs-")
  directories.push(dataDir)
  return { ...env, WAYBILL_DATA_DIR: dataDir, ...extra }
}

const env = {
  WAYBILL_API_KEYS: "acme:embedded-logs-key-0001",
  WAYBILL_ALLOW_PRIVATE_TARGETS: "true",
  WAYBILL_RETRY_DELAY_MS: "100"
}

// A webhook to a port where nothing listens and one event for it; resolves once `done` says so.
const refusedDelivery = async (waybill: Waybill.Waybill, done: () => boolean) => {
  const api = waybill.forWorkspace("acme")
  await api.webhooks.create({
    url: "http://127.0.0.1:9/nobody",
    events: ["tour-created"],
    auth: { type: "hmac", secret: "embedded-logs-secret-0001" }
  })
  await api.events.publish({
    type: "tour-created",
    payload: { tour: { id: "tour_logs", status: "planned", properties: {} } }
  })
  for (let waited = 0; !done() && waited < 20_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50))
}

describe("Waybill.make's log", () => {
  it("WAYBILL_LOG_FORMAT=json: one JSON object per line, a delivery attempt with its fields", async () => {
    const printed: Array<string> = []
    const log = vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      printed.push(String(line))
    })
    try {
      const waybill = await Waybill.make({ env: await variables({ WAYBILL_LOG_FORMAT: "json" }) })
      try {
        await refusedDelivery(waybill, () => printed.some((line) => line.includes('"attempt":2')))
      } finally {
        await waybill.close()
      }
    } finally {
      log.mockRestore()
    }
    const records = printed.map((line) => {
      assert.notInclude(line, "\n")
      assert.notInclude(line, "embedded-logs-secret-0001")
      return JSON.parse(line) as Record<string, unknown>
    })
    const attempt = records.find((record) => record.attempt === 2)
    assert.isDefined(attempt, `${printed.length} lines:\n${printed.join("\n")}`)
    assert.deepInclude(attempt!, {
      level: "warn",
      message: "Webhook delivery attempt failed",
      eventType: "tour-created"
    })
    assert.match(String(attempt!.deliveryId), /^dlv_/)
    assert.match(String(attempt!.webhookId), /^whk_/)
  }, 60_000)

  it("a host's logger receives the records instead", async () => {
    const messages: Array<unknown> = []
    const printed = vi.spyOn(console, "log")
    try {
      const waybill = await Waybill.make({
        env: await variables(),
        logger: Logger.make(({ message }) => messages.push(message))
      })
      try {
        await refusedDelivery(waybill, () => messages.length >= 2)
      } finally {
        await waybill.close()
      }
      assert.strictEqual(printed.mock.calls.length, 0)
    } finally {
      printed.mockRestore()
    }
    assert.include(messages.flat(), "Webhook delivery attempt failed")
  }, 60_000)
})
