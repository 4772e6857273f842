/**
 * Logs and metrics from the start (contract §8): a reference server process per format, through
 * its start, requests, a delivery its receiver refuses and SIGTERM. With `WAYBILL_LOG_FORMAT=json`
 * every line it writes is one JSON object with `timestamp`, `level` and `message`, requests carry
 * `method`, `route`, `status`, `durationMs` and `requestId`, delivery attempts `deliveryId`,
 * `webhookId`, `eventType`, `attempt` and `startedAt`; probes and scrapes are logged at debug only; no line
 * holds a key, secret, token or a query's value. In the text format every line is one logfmt
 * record. A fresh process's `/metrics` has every catalogue type and known outcome at 0.
 */
import type { ChildProcess } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import * as EventType from "@waybill/events/EventType"
import { Effect } from "effect"
import { eventually, receiver } from "./receivers.js"
import { logEntries, logRecord, processKey, serverProcess } from "./server-process.js"

const metricsToken = "logs-test-metrics-token-0001"
const webhookSecret = "logs-test-webhook-secret-0001"
const queryValue = "logs-test-query-value-0001"

const exited = (child: ChildProcess) =>
  Effect.async<number | null>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed(child.exitCode))
    child.once("exit", (code) => resume(Effect.succeed(code)))
    child.kill("SIGTERM")
  })

// Start, a scrape, probes, requests (one with the caller's request id, one with a query holding a
// value), a delivery refused twice (its attempt and its retry), then SIGTERM: the lines written.
const run = (env: Record<string, string>) =>
  Effect.gen(function* () {
    const target = yield* receiver(() => ({ status: 500 }))
    const server = yield* serverProcess(undefined, {
      captureOutput: true,
      env: { WAYBILL_METRICS_TOKEN: metricsToken, ...env }
    })
    const call = (path: string, init: RequestInit = {}) =>
      Effect.promise(() =>
        fetch(`${server.base}${path}`, init).then(async (response) => ({
          status: response.status,
          text: await response.text()
        }))
      )
    const headers = { authorization: `Bearer ${processKey}`, "content-type": "application/json" }
    const metrics = yield* call("/metrics", { headers: { authorization: `Bearer ${metricsToken}` } })
    for (const path of ["/health", "/health/ready"]) assert.strictEqual((yield* call(path)).status, 200, path)
    const traced = yield* call("/transport-shapes", { headers: { ...headers, "x-request-id": "caller-id-0001" } })
    assert.strictEqual(traced.status, 200, traced.text)
    const queried = yield* call(`/drafts?limit=1&api_key=${queryValue}`, { headers })
    assert.strictEqual(queried.status, 200, queried.text)
    const webhook = yield* call("/webhooks", {
      method: "POST",
      headers,
      body: JSON.stringify({
        url: target.url,
        events: ["tour-created"],
        auth: { type: "hmac", secret: webhookSecret }
      })
    })
    assert.strictEqual(webhook.status, 201, webhook.text)
    const published = yield* call("/events", {
      method: "POST",
      headers,
      body: JSON.stringify({
        type: "tour-created",
        payload: { tour: { id: "tour_logs", status: "planned", properties: {} } }
      })
    })
    assert.strictEqual(published.status, 202, published.text)
    const webhookId = JSON.parse(webhook.text).id as string
    yield* eventually(
      Effect.map(
        call(`/alerts?webhookId=${webhookId}`, { headers }),
        (alerts) => JSON.parse(alerts.text).data.length === 1
      ),
      "the failure alert",
      30_000
    )
    assert.strictEqual(yield* exited(server.child), 0, server.output.join("\n"))
    const lines = server.output.filter((line) => line !== "")
    return { lines, metrics: metrics.text, webhookId }
  }).pipe(Effect.scoped)

const noSecret = (output: string) => {
  for (const secret of [processKey, webhookSecret, metricsToken, queryValue]) assert.notInclude(output, secret)
}

describe("the server's log", () => {
  it.live(
    "json and text: one record a line, the contract's fields, probes at debug, no secret; metrics from 0",
    () =>
      Effect.gen(function* () {
        const [json, text] = yield* Effect.all(
          [run({ WAYBILL_LOG_FORMAT: "json", WAYBILL_LOG_LEVEL: "debug" }), run({ WAYBILL_LOG_FORMAT: "text" })],
          { concurrency: 2 }
        )

        // JSON: every line an object with the contract's fields.
        const output = json.lines.join("\n")
        const records = json.lines.map((line) => {
          const record = logRecord(line)
          assert.isTrue(line.startsWith("{") && record !== undefined, `not a JSON record: ${line}`)
          assert.match(String(record!.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, line)
          assert.include(["debug", "info", "warn", "error", "fatal"], record!.level, line)
          assert.isString(record!.message, line)
          return record!
        })
        const requests = records.filter((record) => typeof record.requestId === "string")
        const route = (path: string) => requests.filter((record) => record.route === path)
        for (const path of ["/health", "/health/ready", "/metrics"]) {
          assert.isNotEmpty(route(path), `${path}:\n${output}`)
          for (const record of route(path)) assert.strictEqual(record.level, "debug", JSON.stringify(record))
        }
        const shapes = route("/transport-shapes")[0]!
        assert.deepInclude(shapes, { level: "info", method: "GET", status: 200, requestId: "caller-id-0001" })
        assert.isNumber(shapes.durationMs)
        const drafts = route("/drafts")[0]!
        assert.strictEqual(String(drafts.message).split(" ")[1], "/drafts?limit&api_key")
        assert.match(String(drafts.requestId), /^[0-9a-f-]{36}$/)
        const attempts = records.filter((record) => record.message === "Webhook delivery attempt failed")
        assert.deepStrictEqual(
          attempts.map((record) => [record.level, record.webhookId, record.eventType, record.attempt]),
          [
            ["warn", json.webhookId, "tour-created", 1],
            ["warn", json.webhookId, "tour-created", 2]
          ],
          output
        )
        assert.match(String(attempts[0]!.deliveryId), /^dlv_/)
        // Its start to the millisecond, and its end no later than the record's time.
        for (const attempt of attempts) {
          const end = Date.parse(String(attempt.startedAt)) + Number(attempt.durationMs)
          assert.isAtMost(end, Date.parse(String(attempt.timestamp)), JSON.stringify(attempt))
        }
        noSecret(output)

        // Text: every line one logfmt record; probes are not logged at info.
        const entries = logEntries(text.lines)
        assert.strictEqual(entries.length, text.lines.length, text.lines.join("\n"))
        assert.isTrue(
          entries.some((entry) => entry.level === "WARN" && entry.message === "Webhook delivery attempt failed"),
          text.lines.join("\n")
        )
        assert.isFalse(
          entries.some((entry) => /^GET \/(health|metrics)/.test(entry.message)),
          text.lines.join("\n")
        )
        noSecret(text.lines.join("\n"))

        // Metrics from the first scrape: every catalogue type and known outcome at 0.
        for (const type of EventType.all) {
          assert.include(json.metrics, `waybill_events_published_total{type="${type}"} 0\n`, type)
        }
        for (const status of ["succeeded", "failed"]) {
          assert.include(json.metrics, `waybill_deliveries_total{status="${status}"} 0\n`)
        }
        for (const result of ["success", "http", "timeout", "connect", "dns", "tls", "ssrf"]) {
          assert.include(json.metrics, `waybill_delivery_attempts_total{result="${result}"} 0\n`)
        }
      }),
    180_000
  )
})
