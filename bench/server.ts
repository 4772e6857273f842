/**
 * Benchmark support: a reference server in its own process on a fresh PostgreSQL database (so
 * the load generator never shares its event loop), and autocannon runs against it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import * as SqlClient from "@effect/sql/SqlClient"
import autocannon from "autocannon"
import * as Effect from "effect/Effect"
import pg from "pg"

export const databaseServerUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** A TCP port free on 127.0.0.1 just now. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

/**
 * Registers an HMAC webhook for `events` (default `tour-created`) sending to `url`, on the server
 * at `base` (key `apiKey`); its id. `extra` goes into the request as it is (`ordering`, …).
 */
export const registerWebhook = async (
  base: string,
  url: string,
  events: ReadonlyArray<string> = ["tour-created"],
  extra: Record<string, unknown> = {}
): Promise<string> => {
  const response = await fetch(`${base}/webhooks`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ url, events, auth: { type: "hmac", secret: "benchmark-hmac-secret-0001" }, ...extra })
  })
  const text = await response.text()
  if (response.status !== 201) throw new Error(`webhook registration failed: ${response.status} ${text}`)
  return (JSON.parse(text) as { id: string }).id
}

/** How many deliveries have `status`: of one webhook, or of all of them. */
export const deliveriesWith = (status: string, webhookId?: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    webhookId === undefined
      ? sql<{ count: number }>`SELECT count(*)::int AS count FROM deliveries WHERE status = ${status}`
      : sql<{ count: number }>`SELECT count(*)::int AS count FROM deliveries
          WHERE webhook_id = ${webhookId} AND status = ${status}`
  ).pipe(Effect.map((rows) => rows[0]?.count ?? 0))

/**
 * Creates a throw-away database (named `BENCH_DATABASE_PREFIX`, default `waybill_bench`, and a
 * time stamp); returns its name, its URL and a function that drops it.
 */
export const freshDatabase = async () => {
  const name = `${process.env.BENCH_DATABASE_PREFIX ?? "waybill_bench"}_${Date.now().toString(36)}`
  const admin = new pg.Client({ connectionString: databaseServerUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(databaseServerUrl)
  url.pathname = `/${name}`
  return {
    name,
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: databaseServerUrl })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    }
  }
}

export const apiKey = "bench-key-0000000001"

// Polls `/health` until it answers 200 (with `anyAnswer`, any HTTP answer: a server without it),
// for up to `seconds`; a server that never answers is killed.
export const untilHealthy = async (
  child: ChildProcess,
  base: string,
  what: string,
  anyAnswer = false,
  seconds = 60
) => {
  for (let i = 0; i < seconds * 10; i++) {
    const up = await fetch(`${base}/health`).then(
      (r) => anyAnswer || r.ok,
      () => false
    )
    if (up) {
      const exited = new Promise<void>((resolve) =>
        child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())
      )
      return { base, pid: child.pid!, stop: () => child.kill("SIGTERM"), exited }
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  child.kill("SIGKILL")
  throw new Error(`${what} did not start`)
}

const root = fileURLToPath(new URL("..", import.meta.url))

// The server runs as it is deployed: compiled (`npm run build`, the package's `waybill-server`
// binary), not under tsx, whose esbuild output wraps every closure the code creates in a
// `defineProperty` call (`keepNames`), which costs the request path 15–25 %
// (docs/decisions/0048-benchmarks-run-code-as-deployed.md).
let built: Promise<void> | undefined
const build = () =>
  (built ??= new Promise<void>((resolve, reject) => {
    const child = spawn("npm", ["run", "build", "--silent"], { cwd: root, stdio: ["ignore", "ignore", "inherit"] })
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`npm run build exited with ${code}`))))
  }))

/**
 * Starts `packages/server`, built first, on the database; resolves when `/health` answers. With
 * `BENCH_CPU_PROF=<dir>` the server writes a V8 CPU profile there when it stops. With
 * `{ dataDir }` instead of a URL it runs on its embedded database (PGlite) in that directory.
 * `under` runs node under another program (`["valgrind", "--tool=callgrind", …]`), which slows
 * its start some 50 times (so it gets 10 minutes), and `flags` are node's own.
 */
export const startServer = async (
  database: string | { readonly dataDir: string },
  env: Record<string, string> = {},
  options: { readonly under?: ReadonlyArray<string>; readonly flags?: ReadonlyArray<string> } = {}
) => {
  await build()
  const port = await freePort()
  const { DATABASE_URL: _, ...withoutDatabaseUrl } = process.env
  const [program, ...under] = [...(options.under ?? []), process.execPath]
  const child: ChildProcess = spawn(
    program!,
    [
      ...under,
      ...(options.flags ?? []),
      ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      ...(process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? []),
      "packages/server/dist/main.js"
    ],
    {
      cwd: root,
      stdio: ["ignore", "ignore", "inherit"],
      env: {
        ...withoutDatabaseUrl,
        ...(typeof database === "string" ? { DATABASE_URL: database } : { WAYBILL_DATA_DIR: database.dataDir }),
        PORT: String(port),
        HOST: "127.0.0.1",
        WAYBILL_SECRET_KEY: "cd".repeat(32),
        WAYBILL_API_KEYS: `bench:${apiKey}`,
        WAYBILL_ALLOW_PRIVATE_TARGETS: "true",
        // The compiled server resolves the packages to their builds, not to their sources.
        NODE_OPTIONS: "",
        ...env
      }
    }
  )
  return untilHealthy(child, `http://127.0.0.1:${port}`, "the server", false, options.under === undefined ? 60 : 600)
}

// User and system CPU seconds of a process so far, from /proc (Linux); NaN where unreadable.
// With `withChildren`, the CPU of its children that have exited and been waited for is added.
const cpuOf = (pid: string, withChildren = false): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    const own = Number(fields[11]) + Number(fields[12])
    return (withChildren ? own + Number(fields[13]) + Number(fields[14]) : own) / 100
  } catch {
    return Number.NaN
  }
}

/** CPU seconds the process `pid` has used so far (Linux; NaN elsewhere). */
export const processCpuSeconds = (pid: number): number => cpuOf(String(pid))

/**
 * CPU seconds every PostgreSQL process on this machine has used so far, counting backends that
 * have exited (their time moves to the postmaster's children's time), so that a connection
 * closing between two readings does not make the difference negative (Linux; NaN elsewhere).
 */
export const postgresCpuSeconds = (): number => {
  let seconds = 0
  try {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue
      let command: string
      try {
        command = readFileSync(`/proc/${pid}/cmdline`, "utf8")
      } catch {
        continue
      }
      // Backends and workers name themselves `postgres: …`; the postmaster is the `postgres` binary.
      const program = command.split("\0")[0]!
      if (program.startsWith("postgres") || program.endsWith("/postgres")) seconds += cpuOf(pid, true) || 0
    }
  } catch {
    return Number.NaN
  }
  return seconds
}

/**
 * Starts the floor (`bench/floor.ts`, a minimal HttpApi server with one endpoint) in its own
 * process; resolves when it answers. With `post`, its endpoint is `POST /accept` (see there).
 */
export const startFloor = async (options: { readonly post?: boolean } = {}) => {
  const port = await freePort()
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      "--conditions=@waybill/source",
      "--import",
      "tsx",
      "bench/floor.ts"
    ],
    {
      cwd: root,
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, PORT: String(port), FLOOR_POST: options.post ? "1" : "" }
    }
  )
  return untilHealthy(child, `http://127.0.0.1:${port}`, "the floor server", options.post)
}

export interface LoadResult {
  readonly name: string
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
}

/** One autocannon run; `requests` describes the request(s) to send in turn. */
export const load = async (
  name: string,
  options: {
    url: string
    method?: "GET" | "POST"
    body?: string
    headers?: Record<string, string>
    seconds?: number
    connections?: number
    /** Headers of each request's own (a fresh `Idempotency-Key`, say), added to `headers`. */
    perRequestHeaders?: () => Record<string, string>
  }
): Promise<LoadResult> => {
  const perRequest = options.perRequestHeaders
  const result = await autocannon({
    url: options.url,
    method: options.method ?? "GET",
    ...(options.body === undefined ? {} : { body: options.body }),
    headers: options.headers ?? {},
    ...(perRequest === undefined
      ? {}
      : {
          requests: [
            {
              setupRequest: (request: autocannon.Request) => ({
                ...request,
                headers: { ...request.headers, ...perRequest() }
              })
            }
          ]
        }),
    connections: options.connections ?? 16,
    duration: options.seconds ?? 8
  })
  return {
    name,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx
  }
}

/** Prints load results with their ratio to a ceiling row. */
export const reportLoad = (title: string, rows: ReadonlyArray<LoadResult>, ceiling: string) => {
  const base = rows.find((row) => row.name === ceiling)?.requestsPerSecond ?? Number.NaN
  console.log(`\n${title}`)
  for (const row of rows) {
    console.log(
      `  ${row.name.padEnd(34)} ${row.requestsPerSecond.toFixed(0).padStart(7)} req/s   p50 ${String(row.p50).padStart(4)} ms   p99 ${String(
        row.p99
      ).padStart(
        4
      )} ms   ${(row.requestsPerSecond / base).toFixed(2)} × ${ceiling}${row.non2xx > 0 ? `   non-2xx: ${row.non2xx}` : ""}`
    )
  }
}
