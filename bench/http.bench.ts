/**
 * The reference server's request path against its floor: a minimal
 * `@effect/platform` HttpApi server with one endpoint (`bench/floor.ts`), measured in the same
 * run, round by round, with autocannon (16 connections). Routes: `GET /health`, an
 * authenticated `GET /transport-shapes`, `POST /events` and `POST /drafts` (a recurring
 * master), on a fresh PostgreSQL database. Each route's ratio is the median of its per-round
 * ratios to the floor measured just before it.
 *
 * `POST /events (Idempotency-Key)` sends a fresh `Idempotency-Key` with every request (the answer
 * is kept in the event's own write); its target is against `POST /events` measured in
 * the same round: ≥ 0.8 × its throughput.
 *
 * Beside them, a reference without a target: the same minimal server with one `POST` endpoint
 * taking a JSON body (`FLOOR_POST`, see `bench/floor.ts`), measured like a route. It shows what
 * the framework itself costs for a request with a body; each POST route is also given as a
 * share of it.
 *
 * The request log is off (`WAYBILL_LOG_LEVEL=warn`) unless `BENCH_REQUEST_LOG=1`.
 * `BENCH_ROUNDS` (default 2) and `BENCH_SECONDS` (default 5) set the run's length; `BENCH_ONLY`
 * (part of a route's name, `drafts` for example) keeps the matching routes.
 */
import { median } from "./harness.js"
import { master, tourCreated } from "./payloads.js"
import {
  apiKey,
  databaseServerUrl,
  freshDatabase,
  type LoadResult,
  load,
  postgresCpuSeconds,
  processCpuSeconds,
  startFloor,
  startServer
} from "./server.js"

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const requestLog = process.env.BENCH_REQUEST_LOG === "1"

const database = await freshDatabase()
console.log(
  `PostgreSQL: ${new URL(databaseServerUrl).host}, fresh database; each server in its own process; autocannon, 16 connections, ${SECONDS} s per route, ${ROUNDS} rounds; request log ${requestLog ? "on" : "off"}`
)
const server = await startServer(database.url, requestLog ? {} : { WAYBILL_LOG_LEVEL: "warn" }).catch(async (error) => {
  await database.drop()
  throw error
})
const floor = await startFloor().catch(async (error) => {
  server.stop()
  await database.drop()
  throw error
})
const postFloor = await startFloor({ post: true }).catch(async (error) => {
  floor.stop()
  server.stop()
  await database.drop()
  throw error
})
const auth = { authorization: `Bearer ${apiKey}` }
const json = { ...auth, "content-type": "application/json" }

interface Route {
  readonly name: string
  /** The ratio to the floor to reach; none for the POST reference. */
  readonly target?: number
  readonly p99Under?: number
  /** The process whose CPU the route costs (the reference server unless said). */
  readonly pid?: number
  readonly run: (seconds: number) => Promise<LoadResult>
}
const POST_REFERENCE = "floor POST: minimal HttpApi body"
const IDEMPOTENT_EVENTS = "POST /events (Idempotency-Key)"
// Every request of every round gets a key no other request had.
const runId = Date.now().toString(36)
let keyCount = 0
const allRoutes: ReadonlyArray<Route> = [
  {
    name: "GET /health",
    target: 0.8,
    run: (seconds) => load("GET /health", { url: `${server.base}/health`, seconds })
  },
  {
    name: "GET /transport-shapes (auth)",
    target: 0.6,
    run: (seconds) => load("GET /transport-shapes", { url: `${server.base}/transport-shapes`, headers: auth, seconds })
  },
  {
    name: POST_REFERENCE,
    pid: postFloor.pid,
    run: (seconds) =>
      load("POST /accept", {
        url: `${postFloor.base}/accept`,
        method: "POST",
        body: tourCreated(1),
        headers: { "content-type": "application/json" },
        seconds
      })
  },
  {
    name: "POST /events",
    target: 0.35,
    p99Under: 50,
    run: (seconds) =>
      load("POST /events", {
        url: `${server.base}/events`,
        method: "POST",
        body: tourCreated(1),
        headers: json,
        seconds
      })
  },
  {
    name: IDEMPOTENT_EVENTS,
    target: 0.28,
    run: (seconds) =>
      load(IDEMPOTENT_EVENTS, {
        url: `${server.base}/events`,
        method: "POST",
        body: tourCreated(1),
        headers: json,
        seconds,
        perRequestHeaders: () => ({ "idempotency-key": `bench-${runId}-${++keyCount}` })
      })
  },
  {
    name: "POST /drafts (recurring master)",
    target: 0.25,
    run: (seconds) =>
      load("POST /drafts", {
        url: `${server.base}/drafts`,
        method: "POST",
        body: JSON.stringify(master),
        headers: json,
        seconds
      })
  }
]

// `BENCH_ONLY=drafts` (a substring of the route's name) runs the matching routes alone.
const only = process.env.BENCH_ONLY
// The POST reference comes along with any POST route.
const routes =
  only === undefined
    ? allRoutes
    : allRoutes.filter(
        (route) =>
          route.name.includes(only) ||
          (route.name === POST_REFERENCE && allRoutes.some((r) => r.name.startsWith("POST") && r.name.includes(only)))
      )

try {
  // Warm-up: every route and the floor once, briefly.
  await load("warm-up", { url: `${floor.base}/health`, seconds: 2 })
  for (const route of routes) await route.run(2)
  const floors: Array<LoadResult> = []
  const floorUs: Array<number> = []
  const results = new Map<string, Array<{ result: LoadResult; ratio: number; serverUs: number; postgresUs: number }>>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const route of routes) {
      const floorBefore = processCpuSeconds(floor.pid)
      const base = await load("floor", { url: `${floor.base}/health`, seconds: SECONDS })
      floors.push(base)
      floorUs.push(((processCpuSeconds(floor.pid) - floorBefore) / (base.requestsPerSecond * SECONDS)) * 1e6)
      const pid = route.pid ?? server.pid
      const serverBefore = processCpuSeconds(pid)
      const postgresBefore = postgresCpuSeconds()
      const result = await route.run(SECONDS)
      const requests = result.requestsPerSecond * SECONDS
      const serverUs = ((processCpuSeconds(pid) - serverBefore) / requests) * 1e6
      const postgresUs = ((postgresCpuSeconds() - postgresBefore) / requests) * 1e6
      if (result.non2xx > 0) {
        console.error(`${route.name} answered ${result.non2xx} non-2xx responses`)
        process.exitCode = 1
      }
      const list = results.get(route.name) ?? []
      list.push({ result, ratio: result.requestsPerSecond / base.requestsPerSecond, serverUs, postgresUs })
      results.set(route.name, list)
    }
  }
  const row = (name: string, rows: ReadonlyArray<LoadResult>, ratio: string) =>
    console.log(
      `  ${name.padEnd(32)} ${median(rows.map((r) => r.requestsPerSecond))
        .toFixed(0)
        .padStart(
          6
        )} req/s   p50 ${median(rows.map((r) => r.p50)).toFixed(1)} ms   p99 ${median(rows.map((r) => r.p99)).toFixed(1)} ms   ${ratio}`
    )
  console.log("\nRequest path against the HttpApi floor (medians over rounds)")
  row("floor: minimal HttpApi /health", floors, `1.00 × floor; CPU per request: ${median(floorUs).toFixed(0)} µs`)
  const reference = results.get(POST_REFERENCE)
  const postFloorRatio = reference === undefined ? undefined : median(reference.map((entry) => entry.ratio))
  for (const route of routes) {
    const list = results.get(route.name)!
    const ratio = median(list.map((entry) => entry.ratio))
    const p99 = median(list.map((entry) => entry.result.p99))
    const rounds = `rounds: ${list.map((entry) => entry.ratio.toFixed(2)).join(", ")}`
    const serverUs = median(list.map((entry) => entry.serverUs)).toFixed(0)
    if (route.target === undefined) {
      row(
        route.name,
        list.map((entry) => entry.result),
        `${ratio.toFixed(2)} × floor (reference)   ${rounds}; CPU per request: ${serverUs} µs`
      )
      continue
    }
    const pass = ratio >= route.target && (route.p99Under === undefined || p99 < route.p99Under)
    const ofPostFloor =
      route.name.startsWith("POST") && postFloorRatio !== undefined
        ? ` (${(ratio / postFloorRatio).toFixed(2)} × floor POST)`
        : ""
    row(
      route.name,
      list.map((entry) => entry.result),
      `${ratio.toFixed(2)} × floor${ofPostFloor} (target ≥ ${route.target}${route.p99Under === undefined ? "" : `, p99 < ${route.p99Under} ms`}) ${pass ? "PASS" : "MISS"}   ${rounds}; CPU per request: server ${serverUs} µs, PostgreSQL ${median(list.map((entry) => entry.postgresUs)).toFixed(0)} µs`
    )
  }
  // The Idempotency-Key target: a fresh Idempotency-Key per request against none, round by round.
  const plain = results.get("POST /events")
  const keyed = results.get(IDEMPOTENT_EVENTS)
  if (plain !== undefined && keyed !== undefined) {
    const perRound = keyed.map((entry, i) => entry.result.requestsPerSecond / plain[i]!.result.requestsPerSecond)
    const ratio = median(perRound)
    console.log(
      `  POST /events with Idempotency-Key / without: ${ratio.toFixed(2)} (target ≥ 0.8) ${ratio >= 0.8 ? "PASS" : "MISS"}   rounds: ${perRound.map((r) => r.toFixed(2)).join(", ")}`
    )
  }
} finally {
  postFloor.stop()
  floor.stop()
  server.stop()
  await new Promise((resolve) => setTimeout(resolve, 500))
  await database.drop()
}
