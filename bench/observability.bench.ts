/**
 * The cost of observability: two reference servers, each on a fresh PostgreSQL
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
 * while those events are delivered; and each server's CPU time per event delivered.
 *
 * That is one pair of servers; `BENCH_PAIRS` (default 3) pairs are started one after the other,
 * each with `BENCH_ROUNDS` (default 4, an even number) rounds, the order alternating: each server
 * runs first as often as second, and as often right after its own previous round (which was
 * worth a few per cent to it, docs/benchmarks.md, "Method notes"). One pair's ratio is one draw:
 * two fresh processes of the same code differ by up to a tenth for their whole life (their JIT's
 * and collector's choices, their databases), so single pairs of the default setting spread from
 * 0.73 to 1.24 on one machine in one day (docs/benchmarks.md, "Method notes"). Reported: per
 * pair, on / off as the median of its rounds' ratios; the targets (≥ 0.9 for both) take the
 * median over pairs.
 *
 * `BENCH_ON_ENV` (a JSON object of variables) is added to the "on" server's environment, to price
 * one setting against off in the same way: `{"OTEL_TRACES_SAMPLER":"traceidratio",
 * "OTEL_TRACES_SAMPLER_ARG":"0.1"}` for sampling, `{"OTEL_TRACES_SAMPLER":"always_off"}` for spans
 * made and never exported; a `null` removes a variable: `{"OTEL_EXPORTER_OTLP_ENDPOINT":null}`
 * prices metrics alone, `{"WAYBILL_METRICS_TOKEN":null}` tracing alone.
 */
import { median, target } from "./harness.js"
import { eventBody, scrape, startSink, traceparent } from "./observability-setup.js"
import {
  apiKey,
  freshDatabase,
  type LoadResult,
  load,
  processCpuSeconds,
  registerWebhook,
  startServer
} from "./server.js"

const PAIRS = Number(process.env.BENCH_PAIRS ?? 3)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
if (!Number.isInteger(ROUNDS) || ROUNDS < 2 || ROUNDS % 2 !== 0) {
  throw new Error(
    `BENCH_ROUNDS must be an even number of at least 2 (each server first as often as second), not ${ROUNDS}`
  )
}
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 10)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)

// One sink for spans and deliveries: counts deliveries per server (by path), drops the rest.
const sink = await startSink()

// `BENCH_ON_ENV`'s variables on top of the "on" ones; a `null` removes one (`{"OTEL_EXPORTER_OTLP_ENDPOINT":null}`: metrics alone).
const onEnv = Object.fromEntries(
  Object.entries({
    WAYBILL_LOG_LEVEL: "warn",
    ...sink.onEnv,
    ...(JSON.parse(process.env.BENCH_ON_ENV ?? "{}") as Record<string, string | null>)
  }).filter((entry): entry is [string, string] => entry[1] !== null)
)

const variants = [
  { name: "off", env: { WAYBILL_LOG_LEVEL: "warn" } },
  { name: "on", env: onEnv }
] as const

const json = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }

// Both servers of one pair, each on a fresh database with one webhook to the sink.
const startPair = async () => {
  const servers = []
  for (const variant of variants) {
    const database = await freshDatabase()
    const server = await startServer(database.url, variant.env)
    await registerWebhook(server.base, `${sink.url}/${variant.name}`, ["tour-created"], {
      auth: { type: "bearer", token: "bench-receiver" }
    })
    servers.push({ ...variant, server, database })
  }
  return servers
}

// Deliveries received per second from the start of the load until the outbox is drained (or
// 30 s after the load ended).
const deliveriesPerSecond = async (name: string, started: number, published: number, before: number) => {
  const deadline = Date.now() + 30_000
  while (sink.delivered(`/${name}`) - before < published && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return (sink.delivered(`/${name}`) - before) / ((Date.now() - started) / 1000)
}

// One load of `seconds` on a server and the delivery of what it published: POST /events per
// second, deliveries per second, and the server's CPU microseconds per event delivered.
const round = async (name: string, server: { readonly base: string; readonly pid: number }, seconds: number) => {
  const before = sink.delivered(`/${name}`)
  const cpuBefore = processCpuSeconds(server.pid)
  const started = Date.now()
  const result: LoadResult = await load(`POST /events (${name})`, {
    url: `${server.base}/events`,
    method: "POST",
    body: eventBody,
    headers: json,
    perRequestHeaders: traceparent,
    seconds
  })
  const published = Math.round(result.requestsPerSecond * seconds)
  const perSecond = await deliveriesPerSecond(name, started, published, before)
  const count = sink.delivered(`/${name}`) - before
  return {
    events: result.requestsPerSecond,
    deliveries: perSecond,
    cpuPerEvent: ((processCpuSeconds(server.pid) - cpuBefore) * 1e6) / Math.max(1, count)
  }
}

type Figures = Record<"off" | "on", Array<number>>
const ratio = (values: Figures) => median(values.on.map((value, i) => value / values.off[i]!))

// One pair of fresh servers: warm-up, then rounds taking turns; the medians of the per-round
// ratios. A pair's processes stay faster or slower than another pair's for their whole life
// (their JIT's and collector's choices, their databases), so one pair is one draw.
const measurePair = async (pair: number) => {
  const servers = await startPair()
  // The "on" server is scraped as Prometheus would, every second.
  const on = servers.find((entry) => entry.name === "on")!
  const scraper = setInterval(() => scrape(on.server.base).catch(() => {}), 1_000)
  for (const { name, server } of servers) await round(name, server, WARMUP_SECONDS)
  const events: Figures = { off: [], on: [] }
  const deliveries: Figures = { off: [], on: [] }
  const cpu: Figures = { off: [], on: [] }
  const rounds: Array<string> = []
  for (let index = 0; index < ROUNDS; index++) {
    // The order alternates, so neither always runs on a cooler machine.
    const order = index % 2 === 0 ? servers : [...servers].reverse()
    for (const { name, server } of order) {
      const measured = await round(name, server, SECONDS)
      events[name].push(measured.events)
      deliveries[name].push(measured.deliveries)
      cpu[name].push(measured.cpuPerEvent)
    }
    rounds.push(order.map(({ name }) => `${name} ${events[name].at(-1)!.toFixed(0)}`).join(" then "))
  }
  clearInterval(scraper)
  // Attempts that failed slow a round's deliveries down by their retry delay: the "on" server
  // counts them (`waybill_delivery_attempts_total`), so a pair's deliveries figure can be read.
  const failedAttempts = [
    ...(await scrape(on.server.base)).matchAll(/^waybill_delivery_attempts_total\{result="(\w+)"\} (\d+)/gm)
  ]
    .filter(([, result, count]) => result !== "success" && Number(count) > 0)
    .map(([, result, count]) => `${result} ${count}`)
  for (const { server, database } of servers) {
    server.stop()
    // Its exit first: the database is dropped only without connections, and a profile is written on exit.
    await server.exited
    await database.drop()
  }
  const figures = { events: ratio(events), deliveries: ratio(deliveries), cpu: median(cpu.off) / median(cpu.on) }
  console.log(
    `  pair ${pair}: POST /events off ${median(events.off).toFixed(0)}, on ${median(events.on).toFixed(0)} req/s; deliveries off ${median(deliveries.off).toFixed(0)}, on ${median(deliveries.on).toFixed(0)} /s; CPU per event off ${median(cpu.off).toFixed(0)}, on ${median(cpu.on).toFixed(0)} µs; on / off ${figures.events.toFixed(2)}, ${figures.deliveries.toFixed(2)}, CPU ${figures.cpu.toFixed(2)}`
  )
  console.log(`  pair ${pair}: rounds (POST /events per second, in the order run): ${rounds.join("; ")}`)
  // Every event of the pair's life, warm-up included: the divisor for a profile (`BENCH_CPU_PROF`).
  console.log(
    `  pair ${pair}: events delivered off ${sink.delivered("/off")}, on ${sink.delivered("/on")} so far; the "on" server's failed attempts: ${failedAttempts.join(", ") || "none"}`
  )
  return figures
}

console.log(
  `Metrics and tracing on against off: ${PAIRS} pairs of fresh servers, each ${WARMUP_SECONDS} s of warm-up, then ${ROUNDS} rounds of ${SECONDS} s of POST /events (16 connections) and until delivered`
)
const pairs = []
for (let pair = 1; pair <= PAIRS; pair++) pairs.push(await measurePair(pair))
console.log(`  ${sink.spanExports()} span exports received`)
const passed = [
  target("POST /events, on / off", median(pairs.map((pair) => pair.events)), 0.9),
  target("dispatcher deliveries/s, on / off", median(pairs.map((pair) => pair.deliveries)), 0.9)
].every(Boolean)
sink.close()
process.exit(passed ? 0 : 1)
