/**
 * Publish→receipt latency at fixed rates: the reference server as deployed (built,
 * `packages/server/dist/main.js` in its own process) with one webhook to a receiver on loopback
 * that answers at once, fed by an open-loop publisher (`bench/openloop.ts`), against the floor:
 * the smallest honest outbox relay (`bench/relay.ts`), measured the same way in the same run.
 *
 * On PostgreSQL (`DATABASE_URL`'s server, a fresh database per contender) and on PGlite (the
 * embedded database, a fresh data directory), reported apart. Per contender: a warm-up, then
 * each of `BENCH_LATENCY_RATES` for `BENCH_LATENCY_SECONDS`, then a search (bisection, at most
 * `BENCH_LATENCY_SEARCH_STEPS` runs of `BENCH_LATENCY_SEARCH_SECONDS`) for the highest rate whose
 * publish→receipt p99 stays under 100 ms with nothing lost and the publisher on schedule (it
 * stops early after a run that did not drain, whose backlog the next would measure).
 *
 * Per rate: the achieved rate and how late the publisher's sends were (it fell behind when it
 * achieved under 97 % of the rate or its p99 lateness passed 10 ms); accepted vs delivered after
 * waiting up to `BENCH_LATENCY_DRAIN_SECONDS` for the rest (the missing ones are lost);
 * publish→receipt p50/p95/p99/max; `POST /events` p99; the server's CPU (/proc/<pid>/stat) and
 * PostgreSQL's (the backends connected to the contender's database plus PostgreSQL's own
 * background processes, from pg_stat_activity's pids and /proc/<pid>/stat; a backend that exits
 * mid-run is not counted), both in cores over the sending window; the server's VmRSS, the
 * largest seen (every 200 ms) and after the drain. With PGlite the database is inside the
 * server's process, so its CPU is the server's.
 *
 * Environment (defaults): BENCH_LATENCY_RATES (200,1000,2000), BENCH_LATENCY_SECONDS (20),
 * BENCH_LATENCY_WARMUP_SECONDS (5), BENCH_LATENCY_SEARCH_SECONDS (10), BENCH_LATENCY_SEARCH_STEPS
 * (5, 0 skips the search), BENCH_LATENCY_SEARCH_MAX (16000), BENCH_LATENCY_DRAIN_SECONDS (60),
 * BENCH_LATENCY_CONNECTIONS (128), BENCH_LATENCY_DATABASES (postgres,pglite),
 * BENCH_LATENCY_CONTENDERS (floor,waybill), BENCH_LATENCY_LOG_LEVEL (warn, the server's),
 * BENCH_LATENCY_MARKDOWN (a file to append the markdown tables to; they are printed anyway).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { appendFileSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { buildSync } from "esbuild"
import pg from "pg"
import { Pool } from "undici"
import { quantile } from "./harness.js"
import {
  accepted,
  delivered,
  latencies,
  type Published,
  publish,
  residentBytes,
  stages,
  startReceiver,
  watchResident
} from "./openloop.js"
import {
  apiKey,
  databaseServerUrl,
  freePort,
  freshDatabase,
  processCpuSeconds,
  registerWebhook,
  startServer,
  untilHealthy
} from "./server.js"

const numberFrom = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`)
  return value
}
const listFrom = (name: string, fallback: string) =>
  (process.env[name] ?? fallback)
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0)

const RATES = listFrom("BENCH_LATENCY_RATES", "200,1000,2000").map(Number)
const SECONDS = numberFrom("BENCH_LATENCY_SECONDS", 20)
const WARM_UP = numberFrom("BENCH_LATENCY_WARMUP_SECONDS", 5)
const SEARCH_SECONDS = numberFrom("BENCH_LATENCY_SEARCH_SECONDS", 10)
const SEARCH_STEPS = numberFrom("BENCH_LATENCY_SEARCH_STEPS", 5)
const SEARCH_MAX = numberFrom("BENCH_LATENCY_SEARCH_MAX", 16_000)
const DRAIN = numberFrom("BENCH_LATENCY_DRAIN_SECONDS", 60)
const CONNECTIONS = numberFrom("BENCH_LATENCY_CONNECTIONS", 128)
const DATABASES = listFrom("BENCH_LATENCY_DATABASES", "postgres,pglite")
const CONTENDERS = listFrom("BENCH_LATENCY_CONTENDERS", "floor,waybill")
const LOG_LEVEL = process.env.BENCH_LATENCY_LOG_LEVEL ?? "warn"
const BUDGET_MS = 100

const root = fileURLToPath(new URL("..", import.meta.url))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// ---- the contenders

type Storage =
  | { readonly _tag: "postgres"; readonly name: string; readonly url: string }
  | { readonly _tag: "pglite"; readonly dataDir: string }

interface Contender {
  readonly base: string
  readonly pid: number
  readonly stop: () => void
}

const startWaybill = async (storage: Storage, receiverUrl: string): Promise<Contender> => {
  const server = await startServer(storage._tag === "postgres" ? storage.url : { dataDir: storage.dataDir }, {
    WAYBILL_LOG_LEVEL: LOG_LEVEL
  })
  await registerWebhook(server.base, receiverUrl).catch((error) => {
    server.stop()
    throw error
  })
  return server
}

// The relay runs compiled like the server (esbuild, no `keepNames`), not under tsx.
const relayScript = join(root, "build/bench/relay.mjs")
let relayBuilt = false
const startFloor = async (storage: Storage, receiverUrl: string): Promise<Contender> => {
  if (!relayBuilt) {
    buildSync({
      entryPoints: [join(root, "bench/relay.ts")],
      outfile: relayScript,
      format: "esm",
      platform: "node",
      target: "node20"
    })
    relayBuilt = true
  }
  const port = await freePort()
  const { DATABASE_URL: _, ...environment } = process.env
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      relayScript
    ],
    {
      cwd: root,
      stdio: ["ignore", "ignore", "inherit"],
      env: {
        ...environment,
        ...(storage._tag === "postgres" ? { DATABASE_URL: storage.url } : { RELAY_DATA_DIR: storage.dataDir }),
        PORT: String(port),
        RELAY_API_KEY: apiKey,
        RELAY_WEBHOOK_URL: receiverUrl
      }
    }
  )
  return untilHealthy(child, `http://127.0.0.1:${port}`, "the floor relay")
}

// ---- PostgreSQL's CPU

const postgresCpu = async (admin: pg.Client | undefined, database: string | undefined) => {
  if (admin === undefined || database === undefined) return new Map<number, number>()
  const { rows } = await admin.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE (datname = $1 OR datname IS NULL) AND pid <> pg_backend_pid()",
    [database]
  )
  return new Map(rows.map((row) => [row.pid, processCpuSeconds(row.pid)]))
}
const cpuBetween = (before: Map<number, number>, after: Map<number, number>) => {
  let seconds = 0
  for (const [pid, now] of after) if (Number.isFinite(now)) seconds += now - (before.get(pid) ?? 0)
  return seconds
}

// ---- one rate

interface Row {
  readonly contender: string
  readonly rate: number
  readonly achieved: number
  readonly behind: boolean
  readonly lagP99: number
  readonly accepted: number
  readonly delivered: number
  readonly lost: number
  readonly duplicates: number
  readonly refused: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly max: number
  readonly postP99: number
  readonly serverCores: number
  readonly postgresCores: number
  readonly rssMaxMb: number
  readonly rssAfterMb: number
  readonly drainSeconds: number
  /** p50 and p99 of each stage (Waybill's ids), undefined for the floor. */
  readonly stages: { readonly recorded: Pair; readonly delivered: Pair } | undefined
}

type Pair = readonly [p50: number, p99: number]

const passes = (row: Row) => row.p99 < BUDGET_MS && row.lost === 0 && row.refused === 0 && !row.behind

const measureRate = async (
  contenderName: string,
  contender: Contender,
  pool: Pool,
  receiver: Awaited<ReturnType<typeof startReceiver>>,
  storage: Storage,
  admin: pg.Client | undefined,
  rate: number,
  seconds: number
): Promise<Row> => {
  const database = storage._tag === "postgres" ? storage.name : undefined
  const stopWatching = watchResident(contender.pid)
  const pids = await postgresCpu(admin, database)
  let serverBefore = 0
  let postgresBefore = new Map<number, number>()
  let startedAt = 0
  const published: Published = await publish({
    apiKey,
    rate,
    seconds,
    pool,
    receiver,
    onStart: () => {
      serverBefore = processCpuSeconds(contender.pid)
      postgresBefore = new Map([...pids.keys()].map((pid) => [pid, processCpuSeconds(pid)]))
      startedAt = performance.now()
    }
  })
  const serverSeconds = processCpuSeconds(contender.pid) - serverBefore
  const postgresSeconds = cpuBetween(postgresBefore, await postgresCpu(admin, database))
  const window = (performance.now() - startedAt) / 1000
  const { run } = published
  const drainStart = performance.now()
  while (delivered(run) < accepted(run) && performance.now() - drainStart < DRAIN * 1000) await sleep(20)
  const drainSeconds = (performance.now() - drainStart) / 1000
  const arrivals = latencies(run)
  const ways = stages(run)
  const pair = (sorted: Float64Array): Pair => [quantile(sorted, 0.5), quantile(sorted, 0.99)]
  const achieved = run.count / published.sendingSeconds
  const lagP99 = quantile(published.lag, 0.99)
  const row: Row = {
    contender: contenderName,
    rate,
    achieved,
    behind: achieved < rate * 0.97 || lagP99 > 10,
    lagP99,
    accepted: accepted(run),
    delivered: delivered(run),
    lost: accepted(run) - delivered(run),
    duplicates: run.duplicates,
    refused: published.refused + published.failed,
    p50: quantile(arrivals, 0.5),
    p95: quantile(arrivals, 0.95),
    p99: quantile(arrivals, 0.99),
    max: quantile(arrivals, 1),
    postP99: quantile(published.answers, 0.99),
    serverCores: serverSeconds / window,
    postgresCores: storage._tag === "postgres" ? postgresSeconds / window : Number.NaN,
    rssMaxMb: stopWatching() / 2 ** 20,
    rssAfterMb: residentBytes(contender.pid) / 2 ** 20,
    drainSeconds,
    stages: ways.recorded.length === 0 ? undefined : { recorded: pair(ways.recorded), delivered: pair(ways.delivered) }
  }
  console.log(`    ${line(row)}`)
  await sleep(1000)
  return row
}

// ---- the search

interface Search {
  readonly highest: number
  /** Whether a rate above `highest` failed (otherwise the search stopped at its limits). */
  readonly bounded: boolean
  readonly tried: ReadonlyArray<Row>
}

const search = async (fixed: ReadonlyArray<Row>, measureAt: (rate: number) => Promise<Row>): Promise<Search> => {
  let low = Math.max(0, ...fixed.filter(passes).map((row) => row.rate))
  const failing = fixed.filter((row) => !passes(row) && row.rate > low).map((row) => row.rate)
  let high = failing.length > 0 ? Math.min(...failing) : Number.POSITIVE_INFINITY
  const tried: Array<Row> = []
  for (let step = 0; step < SEARCH_STEPS; step++) {
    // A run that did not drain leaves its backlog to the next: what follows would measure it.
    if ([...fixed, ...tried].some((row) => row.lost > 0)) break
    const next = Number.isFinite(high)
      ? Math.round((low + high) / 2 / 50) * 50
      : Math.min(SEARCH_MAX, Math.max(low * 2, 200))
    if (next <= low || next >= high || (Number.isFinite(high) && high - low <= Math.max(100, low * 0.1))) break
    const row = await measureAt(next)
    tried.push(row)
    if (passes(row)) low = next
    else high = next
    if (!Number.isFinite(high) && low >= SEARCH_MAX) break
  }
  return { highest: low, bounded: Number.isFinite(high), tried }
}

// ---- a contender on a database

interface Suite {
  readonly contender: string
  readonly rows: ReadonlyArray<Row>
  readonly search: Search | undefined
}

const suite = async (
  contenderName: string,
  databaseName: string,
  receiver: Awaited<ReturnType<typeof startReceiver>>
): Promise<Suite> => {
  const postgres = databaseName === "postgres" ? await freshDatabase() : undefined
  const dataDir = postgres === undefined ? mkdtempSync(join(tmpdir(), "waybill-latency-")) : undefined
  const storage: Storage =
    postgres !== undefined
      ? { _tag: "postgres", name: postgres.name, url: postgres.url }
      : { _tag: "pglite", dataDir: dataDir! }
  const admin = postgres !== undefined ? new pg.Client({ connectionString: databaseServerUrl }) : undefined
  let contender: Contender | undefined
  let pool: Pool | undefined
  try {
    await admin?.connect()
    const started = await (contenderName === "waybill" ? startWaybill : startFloor)(storage, receiver.url)
    contender = started
    const publisher = new Pool(started.base, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 })
    pool = publisher
    console.log(`\n  ${contenderName} on ${databaseName}`)
    const at = (seconds: number) => (rate: number) =>
      measureRate(contenderName, started, publisher, receiver, storage, admin, rate, seconds)
    if (WARM_UP > 0) {
      console.log("    (warm-up)")
      await at(WARM_UP)(Math.min(500, ...RATES))
    }
    const rows: Array<Row> = []
    for (const rate of RATES) rows.push(await at(SECONDS)(rate))
    const found = SEARCH_STEPS > 0 ? await search(rows, at(SEARCH_SECONDS)) : undefined
    return { contender: contenderName, rows, search: found }
  } finally {
    await pool?.close()
    contender?.stop()
    await sleep(1000)
    await admin?.end()
    await postgres?.drop()
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
  }
}

// ---- reports

const ms = (value: number) => (Number.isNaN(value) ? "–" : value < 10 ? value.toFixed(1) : value.toFixed(0))
const cores = (value: number) => (Number.isNaN(value) ? "–" : value.toFixed(2))

const line = (row: Row) =>
  [
    `${String(row.rate).padStart(5)}/s`,
    `achieved ${row.achieved.toFixed(0).padStart(5)}/s${row.behind ? " (publisher behind)" : ""}`,
    `late p99 ${ms(row.lagP99)} ms`,
    `accepted ${row.accepted} delivered ${row.delivered} lost ${row.lost}${row.refused > 0 ? ` refused ${row.refused}` : ""}${row.duplicates > 0 ? ` dup ${row.duplicates}` : ""}`,
    `p50/p95/p99/max ${ms(row.p50)}/${ms(row.p95)}/${ms(row.p99)}/${ms(row.max)} ms`,
    `POST p99 ${ms(row.postP99)} ms`,
    `CPU server ${cores(row.serverCores)} PG ${cores(row.postgresCores)}`,
    `RSS max ${row.rssMaxMb.toFixed(0)} MB after ${row.rssAfterMb.toFixed(0)} MB`,
    `drain ${row.drainSeconds.toFixed(1)} s`,
    ...(row.stages === undefined ? [] : [`stages p50/p99 ${stageText(row.stages)}`])
  ].join(" · ")

const stageText = (stages: NonNullable<Row["stages"]>) =>
  `recorded ${ms(stages.recorded[0])}/${ms(stages.recorded[1])}, then received ${ms(stages.delivered[0])}/${ms(stages.delivered[1])} ms`

const searchText = (found: Search | undefined) =>
  found === undefined
    ? "not searched"
    : `${found.bounded ? "" : "≥ "}${found.highest}/s (tried ${found.tried.map((row) => `${row.rate}${passes(row) ? "✓" : "✗"}`).join(", ") || "nothing more"})`

const markdown = (databaseName: string, suites: ReadonlyArray<Suite>) => {
  const floor = suites.find((s) => s.contender === "floor")
  const lines = [
    `**${databaseName === "postgres" ? "PostgreSQL" : "PGlite"}** (${SECONDS} s per rate; ms; CPU in cores over the sending window; ratio = Waybill ÷ floor)`,
    "",
    "| rate/s | contender | achieved/s | accepted | delivered | lost | p50 | p95 | p99 | max | POST /events p99 | server CPU | PostgreSQL CPU | RSS max / after (MB) | p99 ÷ floor |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const rate of RATES) {
    for (const s of suites) {
      const row = s.rows.find((r) => r.rate === rate)
      if (row === undefined) continue
      const base = floor?.rows.find((r) => r.rate === rate)
      const ratio = s.contender === "floor" || base === undefined ? "" : `${(row.p99 / base.p99).toFixed(2)}×`
      lines.push(
        `| ${rate} | ${s.contender} | ${row.achieved.toFixed(0)}${row.behind ? " (behind)" : ""} | ${row.accepted} | ${row.delivered} | ${row.lost} | ${ms(row.p50)} | ${ms(row.p95)} | ${ms(row.p99)} | ${ms(row.max)} | ${ms(row.postP99)} | ${cores(row.serverCores)} | ${cores(row.postgresCores)} | ${row.rssMaxMb.toFixed(0)} / ${row.rssAfterMb.toFixed(0)} | ${ratio} |`
      )
    }
  }
  const staged = suites.flatMap((s) => s.rows.filter((row) => row.stages !== undefined))
  if (staged.length > 0) {
    lines.push(
      "",
      "Where Waybill's time goes (from its event ids, whole ms; p50 / p99): publish → event recorded (the request, its checks, the wait for the batch that records it), then → received (the batch's commit, the notification, fan-out, the POST)",
      "",
      "| rate/s | recorded | then received |",
      "|---:|---:|---:|"
    )
    for (const row of staged) {
      const { recorded, delivered } = row.stages!
      lines.push(
        `| ${row.rate} | ${ms(recorded[0])} / ${ms(recorded[1])} | ${ms(delivered[0])} / ${ms(delivered[1])} |`
      )
    }
  }
  lines.push("")
  for (const s of suites)
    lines.push(`- highest rate with p99 < ${BUDGET_MS} ms, ${s.contender}: ${searchText(s.search)}`)
  return lines.join("\n")
}

// ---- main

console.log(
  `Publish→receipt latency, open loop: rates ${RATES.join(", ")}/s for ${SECONDS} s each after ${WARM_UP} s of warm-up; search ${SEARCH_STEPS} × ${SEARCH_SECONDS} s; ${CONNECTIONS} publisher connections; server log level ${LOG_LEVEL}`
)
const receiver = await startReceiver()
const tables: Array<string> = []
let failed = false
for (const databaseName of DATABASES) {
  if (databaseName !== "postgres" && databaseName !== "pglite") throw new Error(`unknown database ${databaseName}`)
  console.log(`\n${databaseName === "postgres" ? `PostgreSQL (${new URL(databaseServerUrl).host})` : "PGlite"}`)
  const suites: Array<Suite> = []
  for (const contenderName of CONTENDERS) {
    if (contenderName !== "waybill" && contenderName !== "floor") throw new Error(`unknown contender ${contenderName}`)
    suites.push(await suite(contenderName, databaseName, receiver))
  }
  for (const s of suites)
    console.log(`  highest rate with p99 < ${BUDGET_MS} ms, ${s.contender}: ${searchText(s.search)}`)
  if (suites.some((s) => s.rows.some((row) => row.lost > 0))) failed = true
  tables.push(markdown(databaseName, suites))
}
receiver.close()
const report = tables.join("\n\n")
console.log(`\nMarkdown:\n\n${report}\n`)
if (receiver.strays() > 0) console.log(`(${receiver.strays()} arrivals came after their run's drain)`)
if (process.env.BENCH_LATENCY_MARKDOWN) appendFileSync(process.env.BENCH_LATENCY_MARKDOWN, `\n${report}\n`)
process.exit(failed ? 1 : 0)
