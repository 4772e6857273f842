/**
 * The first minutes of an operator: every setting the server cannot use stops it with one line
 * that names the variable and the cause, before anything is written (no migration run into a
 * database it then refuses); no stack trace, no stray `Error: 1`, no secret quoted back. And
 * `npm start` stops with its parent.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { createServer, type Server, type Socket } from "node:net"
import { fileURLToPath } from "node:url"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Exit, Scope } from "effect"
import { assertJsonLogs, runLogFormat } from "./json-logs.js"
import { builtServer, logEntries } from "./server-process.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const postgresUrl = process.env.DATABASE_URL
const secretKey = "a".repeat(64)

interface Run {
  readonly code: number | null
  readonly output: string
}

// The server's environment: only what a user would set, on top of PATH and HOME.
const environment = (env: Record<string, string>): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "",
  WAYBILL_DATA_DIR: "memory://",
  ...runLogFormat,
  ...env
})

const dataDirs: Array<string> = []
afterAll(() => Promise.all(dataDirs.map((dir) => rm(dir, { recursive: true, force: true }))))
/** A data directory holding the run's migrated database, for runs that open it: no initdb. */
const migratedDataDir = async () => {
  const dir = await Testing.makeDataDir("waybill-startup-")
  dataDirs.push(dir)
  return dir
}

// Runs that fail before listening never bind their port. In a JSON run, each line it wrote is a
// JSON record.
const start = (env: Record<string, string>): Promise<Run> =>
  new Promise<Run>((resolve) => {
    execFile(
      process.execPath,
      [builtServer],
      { cwd: root, env: environment(env), timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
          output: stdout + stderr
        })
    )
  }).then((run) => {
    assertJsonLogs(run.output, "the server", environment(env).WAYBILL_LOG_FORMAT)
    return run
  })

/** The run stopped with exit code 1 and one ERROR record on one line, whose message matches `expected`. */
const refused = (run: Run, expected: RegExp): string => {
  assert.strictEqual(run.code, 1, run.output)
  const lines = run.output.trimEnd().split("\n")
  assert.strictEqual(logEntries(lines).length, lines.length, run.output)
  const errors = logEntries(lines).filter((entry) => entry.level === "ERROR")
  assert.strictEqual(errors.length, 1, run.output)
  assert.match(errors[0]!.message, expected)
  assert.notMatch(run.output, /Error: 1|\n\s+at |\\n\s+at /, run.output)
  return errors[0]!.message
}

const psql = (url: string, command: string) =>
  new Promise<string>((resolve, reject) =>
    execFile("psql", [url, "-v", "ON_ERROR_STOP=1", "-qtAc", command], (error, stdout) =>
      error === null ? resolve(stdout) : reject(error)
    )
  )

const tablesIn = (url: string) =>
  new Promise<number>((resolve, reject) =>
    execFile(
      "psql",
      [
        url,
        "-qtAc",
        "SELECT count(*) FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
      ],
      (error, stdout) => (error === null ? resolve(Number(stdout.trim())) : reject(error))
    )
  )

describe("configuration errors name their variable and change nothing", () => {
  it("a bad value of each setting", async () => {
    const cases: ReadonlyArray<[Record<string, string>, RegExp]> = [
      [{ WAYBILL_SECRET_KEY: "xyz" }, /WAYBILL_SECRET_KEY: must be 32 bytes as 64 hexadecimal characters/],
      [{ PORT: "abc" }, /PORT: .*"abc"/],
      [{ DATABASE_URL: "notaurl", WAYBILL_SECRET_KEY: secretKey }, /DATABASE_URL: must be a PostgreSQL URL/],
      [{ WAYBILL_RETRY_DELAY_MS: "-5" }, /WAYBILL_RETRY_DELAY_MS: must be a positive integer/],
      [{ WAYBILL_DELIVERY_TIMEOUT_MS: "soon" }, /WAYBILL_DELIVERY_TIMEOUT_MS: /],
      [{ WAYBILL_DELIVERY_LEASE_MS: "0" }, /WAYBILL_DELIVERY_LEASE_MS: must be an integer of at least 3000/],
      [{ WAYBILL_GENERATOR_INTERVAL_MS: "1.5" }, /WAYBILL_GENERATOR_INTERVAL_MS: /],
      [{ WAYBILL_API_KEYS: "nocolon" }, /WAYBILL_API_KEYS: entry 1 must be workspaceId:key/],
      [{ WAYBILL_ALLOW_PRIVATE_TARGETS: "perhaps" }, /WAYBILL_ALLOW_PRIVATE_TARGETS: /],
      [{ WAYBILL_CLOCK_START: "yesterday" }, /WAYBILL_CLOCK_START: must be an ISO 8601 instant/],
      [{ WAYBILL_DATABASE_SCHEMA: "Waybill-1" }, /WAYBILL_DATABASE_SCHEMA: must be a lower-case PostgreSQL identifier/],
      [{ WAYBILL_REFERENCE_DATA: "/nonexistent/reference.json" }, /WAYBILL_REFERENCE_DATA: .*cannot be read/],
      [{ WAYBILL_METRICS_TOKEN: "short" }, /WAYBILL_METRICS_TOKEN: must be 16 to 255 visible ASCII characters/],
      [{ WAYBILL_LOG_FORMAT: "xml" }, /WAYBILL_LOG_FORMAT: Expected one of \(text, json\)/],
      // Refused in the format asked for: one JSON object.
      [
        { WAYBILL_LOG_FORMAT: "json", WAYBILL_LOG_LEVEL: "loud" },
        /WAYBILL_LOG_LEVEL: must be one of trace, debug, info, warn, error, fatal, off/
      ],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" },
        /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:\/\/ or https:\/\/ URL/
      ],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
        /OTEL_EXPORTER_OTLP_PROTOCOL: /
      ]
    ]
    const runs = await Promise.all(cases.map(([env]) => start(env)))
    for (const [index, run] of runs.entries()) refused(run, cases[index]![1])
    const json = runs[cases.findIndex(([env]) => env.WAYBILL_LOG_FORMAT === "json")]!
    assert.strictEqual(JSON.parse(json.output).level, "error", json.output)
  })

  it("several bad settings are reported together, and a secret is never quoted back", async () => {
    const run = await start({
      WAYBILL_SECRET_KEY: "my-secret-passphrase",
      PORT: "99999",
      WAYBILL_API_KEYS: "acme:short"
    })
    const message = refused(run, /Configuration error \(nothing was started\): /)
    assert.match(message, /PORT: [^;]*"99999"/)
    assert.match(message, /WAYBILL_SECRET_KEY: must be 32 bytes/)
    assert.match(message, /WAYBILL_API_KEYS: entry 1 has a key shorter than 8 characters/)
    assert.notInclude(run.output, "my-secret-passphrase")
  })
})

describe("database errors are one line naming DATABASE_URL", () => {
  const scope = Effect.runSync(Scope.make())
  let url: string | undefined
  let taken: Server | undefined
  let takenPort = 0
  // The connections the taken port accepted: closed with it, so closing never waits on a peer.
  const accepted = new Set<Socket>()
  beforeAll(async () => {
    taken = createServer((socket) => {
      accepted.add(socket)
      socket.on("close", () => accepted.delete(socket))
    })
    await new Promise<void>((resolve) => taken!.listen(0, "127.0.0.1", resolve))
    takenPort = (taken.address() as { port: number }).port
    if (postgresUrl === undefined) return
    url = await Effect.runPromise(Scope.extend(Testing.freshPostgresDatabase(postgresUrl), scope))
  }, 60_000)
  afterAll(async () => {
    for (const socket of accepted) socket.destroy()
    await new Promise<void>((resolve) => taken?.close(() => resolve()) ?? resolve())
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("an unreachable host and a port in use", async () => {
    const [unreachable, inUse] = await Promise.all([
      start({ DATABASE_URL: `postgres://postgres:hunter2@127.0.0.1:${takenPort}/shop`, WAYBILL_SECRET_KEY: secretKey }),
      start({ PORT: String(takenPort), WAYBILL_DATA_DIR: await migratedDataDir() })
    ])
    // The taken port answers TCP but not PostgreSQL's protocol: either way one line, no password.
    refused(unreachable, new RegExp(`DATABASE_URL: cannot use PostgreSQL at 127\\.0\\.0\\.1:${takenPort}/shop: `))
    assert.notInclude(unreachable.output, "hunter2")
    refused(inUse, new RegExp(`PORT: 127\\.0\\.0\\.1:${takenPort} is already in use \\(EADDRINUSE\\)`))
  })

  it.skipIf(postgresUrl === undefined)(
    "[postgres] no secret key: refused before any migration; a database that does not exist: how to create it",
    async () => {
      const noKey = await start({ DATABASE_URL: url! })
      refused(noKey, /WAYBILL_SECRET_KEY: is required with DATABASE_URL/)
      assert.strictEqual(await tablesIn(url!), 0)
      const missing = new URL(url!)
      missing.pathname = "/waybill_no_such_database"
      const run = await start({ DATABASE_URL: missing.toString(), WAYBILL_SECRET_KEY: secretKey })
      refused(
        run,
        /DATABASE_URL: cannot use PostgreSQL at [^ ]+\/waybill_no_such_database: database "waybill_no_such_database" does not exist \(create it with: createdb waybill_no_such_database\)/
      )
    }
  )

  it.skipIf(postgresUrl === undefined)(
    "[postgres] a migration that fails names the migration, its statement and PostgreSQL's reason, and leaves nothing",
    async () => {
      // A table in the way, made by hand in Waybill's schema.
      await psql(url!, "CREATE SCHEMA waybill; CREATE TABLE waybill.tours (id text)")
      const run = await start({ DATABASE_URL: url!, WAYBILL_SECRET_KEY: secretKey })
      refused(
        run,
        /DATABASE_URL: cannot migrate PostgreSQL at [^ ]+: Migration "3_tours" failed at statement `CREATE TABLE tours \( workspace_id text NOT NULL, .*`: relation "tours" already exists \[SQLSTATE 42P07\]$/
      )
      assert.strictEqual(await tablesIn(url!), 1)
      await psql(url!, "DROP SCHEMA waybill CASCADE")
    }
  )
})

// The process ids of a process's descendants, from /proc.
const descendants = (pid: number): Array<number> => {
  const children: Array<number> = []
  for (const task of existsSync(`/proc/${pid}/task`) ? readdirSync(`/proc/${pid}/task`) : []) {
    const file = `/proc/${pid}/task/${task}/children`
    if (existsSync(file)) {
      children.push(
        ...readFileSync(file, "utf8")
          .split(" ")
          .filter((s) => s.trim() !== "")
          .map(Number)
      )
    }
  }
  return children.flatMap((child) => [child, ...descendants(child)])
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ")
  } catch {
    return false
  }
}

const waitUntil = async (condition: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return true
}

describe("npm start stops with its parent", () => {
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    it(`kill -${signal.slice(3)} of npm start ends the server`, async () => {
      const npm: ChildProcess = spawn("npm", ["start"], {
        cwd: root,
        env: environment({ WAYBILL_DATA_DIR: await migratedDataDir() }),
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      npm.stdout!.on("data", (chunk) => (output += chunk))
      npm.stderr!.on("data", (chunk) => (output += chunk))
      try {
        assert.isTrue(await waitUntil(() => /Listening on/.test(output), 50_000), output)
        const node = descendants(npm.pid!).find((pid) =>
          readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("packages/server/src/main.ts")
        )
        assert.isDefined(node, output)
        process.kill(npm.pid!, signal)
        assert.isTrue(await waitUntil(() => !alive(node!), 20_000), `the server (pid ${node}) outlived npm:\n${output}`)
        // npm's own lines (`> waybill@… start`, `> tsx …`) aside.
        assertJsonLogs(
          output.split("\n").filter((line) => !line.startsWith("> ")),
          "npm start"
        )
      } finally {
        for (const pid of [...descendants(npm.pid!), npm.pid!]) {
          try {
            process.kill(pid, "SIGKILL")
          } catch {
            // Already gone.
          }
        }
      }
    })
  }
})
