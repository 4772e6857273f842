/**
 * The cost of observability (issue 36): two reference servers, each on a fresh PostgreSQL
 * database, one as it runs by default (no `WAYBILL_METRICS_TOKEN`, no `OTEL_*`: no request
 * metrics, no spans, only the `traceparent` header), the other with metrics and tracing on
 * (`GET /metrics` scraped every second by this process, spans exported over OTLP/HTTP protobuf
 * to a sink in this process). Each has one webhook to a receiver here that answers 200 at once.
 *
 * First each server takes `BENCH_WARMUP_SECONDS` (default 10) of the same load that does not
 * count: the cost asked is the steady one, not the JIT's and the lazily loaded modules' (the
 * tracing server loads the OpenTelemetry SDK on start and compiles its paths under the first
 * load). Then per round, in turn: `POST /events` throughput (autocannon, 16 connections, every
 * request with a `traceparent`), and the dispatcher's throughput, deliveries received per second
 * while those events are delivered; and each server's CPU time per event delivered. Reported:
 * on / off, the median of the per-round ratios; target ≥ 0.9 for both (the machine is shared:
 * compare only ratios taken in the same run).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { median, target } from "./harness.js"
import { apiKey, freshDatabase, type LoadResult, load, processCpuSeconds, startServer } from "./server.js"

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 10)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const metricsToken = "bench-metrics-token-0001"

// One sink for spans and deliveries: counts deliveries per server (by path), drops the rest.
const delivered = new Map<string, number>()
let spansExported = 0
const sink = http.createServer((request, response) => {
  request.resume()
  request.on("end", () => {
    const path = request.url ?? "/"
    if (path === "/v1/traces") spansExported++
    else delivered.set(path, (delivered.get(path) ?? 0) + 1)
    response.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
})
await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", () => resolve()))
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`

const variants = [
  { name: "off", env: { WAYBILL_LOG_LEVEL: "warn" } },
  {
    name: "on",
    env: {
      WAYBILL_LOG_LEVEL: "warn",
      WAYBILL_METRICS_TOKEN: metricsToken,
      OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf"
    }
  }
] as const

const json = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }
const servers = []
for (const variant of variants) {
  const database = await freshDatabase()
  const server = await startServer(database.url, variant.env)
  const hook = await fetch(`${server.base}/webhooks`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({
      url: `${sinkUrl}/${variant.name}`,
      events: ["tour-created"],
      auth: { type: "bearer", token: "bench-receiver" }
    })
  })
  if (hook.status !== 201) throw new Error(`POST /webhooks: ${hook.status} ${await hook.text()}`)
  servers.push({ ...variant, server, database })
}

// The "on" server is scraped as Prometheus would, every second.
const on = servers.find((entry) => entry.name === "on")!
const scraper = setInterval(() => {
  fetch(`${on.server.base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })
    .then((r) => r.text())
    .catch(() => {})
}, 1_000)

const body = JSON.stringify({
  type: "tour-created",
  payload: { tour: { id: "tour_bench", status: "planned", substatus: null, properties: {} } }
})
let traceCount = 0
const traceparent = () => {
  const id = (++traceCount).toString(16).padStart(32, "0")
  return { traceparent: `00-${id}-00f067aa0ba902b7-01` }
}

// Deliveries received per second from the start of the load until the outbox is drained (or
// 30 s after the load ended).
const deliveriesPerSecond = async (name: string, started: number, published: number, before: number) => {
  const deadline = Date.now() + 30_000
  while ((delivered.get(`/${name}`) ?? 0) - before < published && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return ((delivered.get(`/${name}`) ?? 0) - before) / ((Date.now() - started) / 1000)
}

// One load of `seconds` on a server and the delivery of what it published: POST /events per
// second, deliveries per second, and the server's CPU microseconds per event delivered.
const round = async (name: string, server: { readonly base: string; readonly pid: number }, seconds: number) => {
  const before = delivered.get(`/${name}`) ?? 0
  const cpuBefore = processCpuSeconds(server.pid)
  const started = Date.now()
  const result: LoadResult = await load(`POST /events (${name})`, {
    url: `${server.base}/events`,
    method: "POST",
    body,
    headers: json,
    perRequestHeaders: traceparent,
    seconds
  })
  const published = Math.round(result.requestsPerSecond * seconds)
  const perSecond = await deliveriesPerSecond(name, started, published, before)
  const count = (delivered.get(`/${name}`) ?? 0) - before
  return {
    events: result.requestsPerSecond,
    deliveries: perSecond,
    cpuPerEvent: ((processCpuSeconds(server.pid) - cpuBefore) * 1e6) / Math.max(1, count)
  }
}

console.log(
  `Metrics and tracing on against off: ${WARMUP_SECONDS} s of warm-up each, then ${ROUNDS} rounds, ${SECONDS} s of POST /events each (16 connections), then until delivered`
)
for (const { name, server } of servers) await round(name, server, WARMUP_SECONDS)
const events: Record<string, Array<number>> = { off: [], on: [] }
const deliveries: Record<string, Array<number>> = { off: [], on: [] }
const cpu: Record<string, Array<number>> = { off: [], on: [] }
for (let index = 0; index < ROUNDS; index++) {
  // The order alternates, so neither always runs on a cooler machine.
  const order = index % 2 === 0 ? servers : [...servers].reverse()
  for (const { name, server } of order) {
    const measured = await round(name, server, SECONDS)
    events[name]!.push(measured.events)
    deliveries[name]!.push(measured.deliveries)
    cpu[name]!.push(measured.cpuPerEvent)
  }
}
clearInterval(scraper)

const ratio = (values: Record<string, Array<number>>) => median(values.on!.map((value, i) => value / values.off![i]!))
const eventsRatio = ratio(events)
const deliveriesRatio = ratio(deliveries)
console.log(`  POST /events   off ${median(events.off!).toFixed(0)} req/s, on ${median(events.on!).toFixed(0)} req/s`)
console.log(
  `  deliveries     off ${median(deliveries.off!).toFixed(0)} /s, on ${median(deliveries.on!).toFixed(0)} /s; ${spansExported} span exports received`
)
console.log(
  `  server CPU per event, rounds: off ${cpu.off!.map((value) => value.toFixed(0)).join(", ")} µs; on ${cpu.on!.map((value) => value.toFixed(0)).join(", ")} µs (median off / on ${(median(cpu.off!) / median(cpu.on!)).toFixed(2)})`
)
const passed = [
  target("POST /events, on / off", eventsRatio, 0.9),
  target("dispatcher deliveries/s, on / off", deliveriesRatio, 0.9)
].every(Boolean)

for (const { server, database } of servers) {
  server.stop()
  await database.drop()
}
sink.close()
process.exit(passed ? 0 : 1)
