/**
 * Metrics (contract §8): `GET /metrics` behind `WAYBILL_METRICS_TOKEN`, scraped by a real
 * Prometheus (Debian's `prometheus` package, which `.ci/run` installs; nothing is installed here)
 * every second with the token; events published to a receiver; the increase of
 * `waybill_deliveries_total{status="succeeded"}` read back through Prometheus's query API equals
 * the deliveries the receiver got. Route labels are templates: 1,000 distinct draft ids leave
 * the number of series as it was. The alert rules pass `promtool check rules`.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Redacted } from "effect"
import { baseUrl, call, keys, serverLayer, testLog } from "./harness.js"
import * as RawHttp from "./raw-http.js"
import { eventually, receiver } from "./receivers.js"
import { freePort } from "./server-process.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const rules = join(root, "docs/prometheus/waybill.rules.yml")
const prometheusBin = "/usr/bin/prometheus"
const promtoolBin = "/usr/bin/promtool"
const token = "metrics-test-token-0001"

const tourEvent = (n: number) => ({
  type: "tour-created",
  payload: { tour: { id: `tour_metrics_${n}`, status: "planned", substatus: null, properties: {} } }
})

const scrape = (authorization?: string) =>
  Effect.gen(function* () {
    const base = yield* baseUrl
    return yield* Effect.promise(() =>
      fetch(`${base}/metrics`, authorization === undefined ? {} : { headers: { authorization } }).then(
        async (response) => ({
          status: response.status,
          type: response.headers.get("content-type"),
          text: await response.text()
        })
      )
    )
  })

/** A scrape with repeated `Authorization` headers, one line each, as Node's client sends them. */
const scrapeWithHeaderLines = (authorization: ReadonlyArray<string>) =>
  Effect.flatMap(baseUrl, (base) =>
    Effect.promise(() => RawHttp.withHeaderLines(`${base}/metrics`, "GET", authorization))
  )

// Prometheus on a free port with its own configuration and data directory, stopped by its pid.
const prometheus = (target: string) =>
  Effect.gen(function* () {
    const port = yield* freePort
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "waybill-prometheus-"))),
      (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
    )
    writeFileSync(
      join(dir, "prometheus.yml"),
      [
        "global:",
        "  scrape_interval: 1s",
        "  evaluation_interval: 1s",
        "rule_files:",
        `  - ${JSON.stringify(rules)}`,
        "scrape_configs:",
        "  - job_name: waybill",
        "    metrics_path: /metrics",
        "    authorization:",
        "      type: Bearer",
        `      credentials: ${JSON.stringify(token)}`,
        "    static_configs:",
        `      - targets: [${JSON.stringify(target)}]`
      ].join("\n")
    )
    const output: Array<string> = []
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(
          prometheusBin,
          [
            `--config.file=${join(dir, "prometheus.yml")}`,
            `--storage.tsdb.path=${join(dir, "data")}`,
            `--web.listen-address=127.0.0.1:${port}`
          ],
          { stdio: ["ignore", "pipe", "pipe"] }
        )
        for (const stream of [child.stdout, child.stderr]) stream?.on("data", (chunk) => output.push(String(chunk)))
        return child
      }),
      (child: ChildProcess) =>
        Effect.async<void>((resume) => {
          if (child.exitCode !== null) return resume(Effect.void)
          child.once("exit", () => resume(Effect.void))
          process.kill(child.pid!, "SIGTERM")
        })
    )
    const api = `http://127.0.0.1:${port}`
    yield* eventually(
      Effect.promise(() =>
        fetch(`${api}/-/ready`).then(
          (r) => r.ok,
          () => false
        )
      ),
      `Prometheus to start (${output.join("").slice(-500)})`,
      30_000
    )
    // One instant query: the value of the single series it answers, `undefined` for none.
    const query = (expression: string, time?: number) =>
      Effect.promise(async () => {
        const params = new URLSearchParams({ query: expression })
        if (time !== undefined) params.set("time", String(time))
        const response = await fetch(`${api}/api/v1/query?${params}`)
        const body = (await response.json()) as {
          status: string
          data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> }
        }
        if (body.status !== "success") throw new Error(`query ${expression}: ${JSON.stringify(body)}`)
        return body.data.result
      })
    const value = (expression: string, time?: number) =>
      Effect.map(query(expression, time), (result) =>
        result.length === 1 ? Number(result[0]!.value[1]) : result.length === 0 ? undefined : Number.NaN
      )
    return { api, query, value, output }
  })

const seriesCount = (text: string) => text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).length

const log = testLog("the metrics suite")

describe("the alert rules", () => {
  it.skipIf(!existsSync(promtoolBin))("pass promtool check rules", async () => {
    const { stdout } = await promisify(execFile)(promtoolBin, ["check", "rules", rules], { encoding: "utf8" })
    assert.match(stdout, /SUCCESS: 3 rules found/)
  })
})

for (const backend of Testing.backends()) {
  layer(serverLayer(backend, { metricsToken: Redacted.make(token) }, {}, log), {
    timeout: "120 seconds",
    excludeTestServices: true
  })(`GET /metrics [${backend.name}]`, (it) => {
    log.showOnFailure()

    it.effect("answers the token only: no token, another token and an API key get 401", () =>
      Effect.gen(function* () {
        for (const authorization of [undefined, "Bearer not-the-metrics-token", `Bearer ${keys.a}`]) {
          const reply = yield* scrape(authorization)
          assert.strictEqual(reply.status, 401, String(authorization))
          const body = JSON.parse(reply.text)
          assert.strictEqual(body.code, "unauthorized")
          assert.deepStrictEqual(body.issues, [])
        }
        const reply = yield* scrape(`Bearer ${token}`)
        assert.strictEqual(reply.status, 200)
        assert.strictEqual(reply.type, "text/plain; version=0.0.4; charset=utf-8")
        for (const series of [
          "waybill_events_published_total",
          "waybill_deliveries_total",
          "waybill_delivery_attempts_total",
          "waybill_delivery_attempt_duration_seconds",
          "waybill_delivery_latency_seconds",
          "waybill_deliveries_pending",
          "waybill_outbox_lag_seconds",
          "waybill_http_requests_total",
          "waybill_http_request_duration_seconds",
          "waybill_database_up",
          "waybill_tours_generated_total",
          "process_cpu_seconds_total",
          "process_resident_memory_bytes",
          "nodejs_eventloop_lag_seconds"
        ]) {
          assert.include(reply.text, `# HELP ${series} `, series)
          assert.include(reply.text, `# TYPE ${series} `, series)
        }
        assert.include(reply.text, "waybill_database_up 1\n")
        const openapi = yield* call("/openapi.json")
        assert.notProperty(openapi.body.paths, "/metrics")
      })
    )

    it.effect("two Authorization headers are 401, whichever comes first, as on every other route", () =>
      Effect.gen(function* () {
        const good = `Bearer ${token}`
        assert.strictEqual((yield* scrapeWithHeaderLines([good])).status, 200)
        for (const twice of [
          [good, "Bearer x"],
          ["Bearer x", good],
          [good, good]
        ]) {
          const reply = yield* scrapeWithHeaderLines(twice)
          assert.strictEqual(reply.status, 401, String(twice))
          assert.strictEqual(JSON.parse(reply.text).code, "unauthorized")
        }
      })
    )

    it.effect("labels routes with their templates: 1,000 draft ids add no series", () =>
      Effect.gen(function* () {
        const ids = Array.from({ length: 1_000 }, (_, n) => `drf_${String(n).padStart(26, "0")}`)
        yield* call(`/drafts/${ids[0]}`, { key: keys.a })
        yield* call(`/drafts/${ids[0]}/actions`, { key: keys.a, json: { action: "cancel" } })
        const before = seriesCount((yield* scrape(`Bearer ${token}`)).text)
        yield* Effect.forEach(
          ids,
          (id, n) =>
            call(n % 2 === 0 ? `/drafts/${id}` : `/drafts/${id}/actions`, {
              key: keys.a,
              ...(n % 2 === 0 ? {} : { json: { action: "cancel" } })
            }),
          { concurrency: 16, discard: true }
        )
        const after = (yield* scrape(`Bearer ${token}`)).text
        assert.strictEqual(seriesCount(after), before)
        assert.include(after, 'route="/drafts/{id}"')
        assert.include(after, 'route="/drafts/{id}/actions"')
        for (const id of ids) assert.notInclude(after, id)
      })
    )

    it.effect.skipIf(!existsSync(prometheusBin))(
      "a real Prometheus reads the deliveries the receiver got",
      () =>
        Effect.gen(function* () {
          const target = new URL(yield* baseUrl).host
          const server = yield* prometheus(target)
          const got = yield* receiver()
          const webhook = yield* call("/webhooks", {
            key: keys.a,
            json: { url: got.url, events: ["tour-created"], auth: { type: "bearer", token: "metrics-receiver" } }
          })
          assert.strictEqual(webhook.status, 201, webhook.text)
          const succeeded = 'waybill_deliveries_total{job="waybill",status="succeeded"}'
          // A scrape before anything is published: the baseline.
          yield* eventually(
            Effect.map(server.value(succeeded), (v) => v !== undefined),
            "Prometheus's first scrape",
            30_000
          )
          // Published only after a scrape that saw none of them.
          const t0 = Date.now() / 1000
          yield* Effect.sleep("1500 millis")
          const before = yield* server.value(succeeded, t0)
          assert.isDefined(before)
          const published = 25
          yield* Effect.forEach(
            Array.from({ length: published }, (_, n) => n),
            (n) => call("/events", { key: keys.a, json: tourEvent(n) }),
            { concurrency: 5, discard: true }
          )
          yield* eventually(
            Effect.sync(() => got.received.length >= published),
            "the deliveries",
            30_000
          )
          yield* eventually(
            Effect.map(server.value(succeeded), (v) => v !== undefined && v - before! >= got.received.length),
            "Prometheus to scrape the deliveries",
            30_000
          )
          // The increase since t0, as Prometheus computes it.
          const t1 = Date.now() / 1000
          const offset = Math.round((t1 - t0) * 1000)
          const increase = yield* server.value(`${succeeded} - ${succeeded} offset ${offset}ms`, t1)
          assert.strictEqual(increase, got.received.length)
          assert.strictEqual(got.received.length, published)
          assert.strictEqual(yield* server.value('up{job="waybill"}'), 1)
          const rules = yield* Effect.promise(() =>
            fetch(`${server.api}/api/v1/rules`).then(
              (r) =>
                r.json() as Promise<{ data: { groups: Array<{ rules: Array<{ name: string; health: string }> }> } }>
            )
          )
          const loaded = rules.data.groups.flatMap((group) => group.rules)
          assert.deepStrictEqual(
            loaded.map((rule) => rule.name),
            ["WaybillOutboxLag", "WaybillDeliveryFailureRatio", "WaybillDatabaseDown"]
          )
          assert.isTrue(
            loaded.every((rule) => rule.health === "ok"),
            JSON.stringify(loaded)
          )
          // Every query of the Grafana dashboard runs, and those of Waybill's series find data.
          const dashboard = JSON.parse(readFileSync(join(root, "docs/grafana/waybill.dashboard.json"), "utf8")) as {
            panels: Array<{ title: string; datasource: { uid: string }; targets: Array<{ expr: string }> }>
          }
          assert.isAtLeast(dashboard.panels.length, 10)
          for (const panel of dashboard.panels) {
            assert.strictEqual(panel.datasource.uid, ["$", "{DS_PROMETHEUS}"].join(""), panel.title)
            for (const { expr } of panel.targets) {
              const query = server.query(expr.replaceAll("$__rate_interval", "1m"))
              if (/waybill_(events|deliveries_total|delivery_attempts|http)/.test(expr)) {
                // A rate needs two samples of a series, and a series labelled by event type has
                // existed only since the first event: wait for the next scrapes (1 s apart).
                yield* eventually(
                  Effect.map(query, (result) => result.length > 0),
                  `${panel.title}: ${expr} to find data`,
                  20_000
                )
              } else {
                yield* query
              }
            }
          }
        }).pipe(Effect.scoped),
      120_000
    )
  })
}

layer(serverLayer(Testing.backends()[0]!, {}, {}, log), { timeout: "120 seconds", excludeTestServices: true })(
  "GET /metrics without WAYBILL_METRICS_TOKEN",
  (it) => {
    log.showOnFailure()
    it.effect("is not there: 404, with or without a bearer", () =>
      Effect.gen(function* () {
        for (const authorization of [undefined, `Bearer ${token}`, `Bearer ${keys.a}`]) {
          const reply = yield* scrape(authorization)
          assert.strictEqual(reply.status, 404, String(authorization))
          assert.strictEqual(JSON.parse(reply.text).code, "not_found")
        }
      })
    )
  }
)

if (!process.env.DATABASE_URL) {
  describe("GET /metrics [postgres]", () => {
    it.skip("NOT RUN: DATABASE_URL is not set, so this suite ran on PGlite only", () => {})
  })
}
