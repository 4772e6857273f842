/**
 * The reference server in a process of its own (the run's build, `node
 * packages/server/dist/main.js`) on a free loopback port: for tests that kill it, read its memory,
 * or read its log. The process is killed with SIGKILL when the scope closes.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Fiber } from "effect"
import { assertJsonLogs, runLogFormat } from "./json-logs.js"
import { eventually } from "./receivers.js"

const root = fileURLToPath(new URL("..", import.meta.url))

/**
 * The reference server's command as built (`waybill-server`): `vitest.global-setup.ts` builds
 * before any test, and a start from the build costs about 3 s of CPU less than under tsx.
 */
export const builtServer = join(root, "packages/server/dist/main.js")

/** The API key of workspace `ws-proc` in every server process. */
export const processKey = "process-test-key-0001"

export const freePort = Effect.async<number>((resume) => {
  const probe = createServer()
  probe.listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as { port: number }
    probe.close(() => resume(Effect.succeed(port)))
  })
})

/**
 * The test's environment for a built command: without `DATABASE_URL` (each test names its
 * database) and without Vitest's `NODE_OPTIONS`, whose `@waybill/source` condition would load the
 * TypeScript sources under the build.
 */
export const builtCommandEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
  const { DATABASE_URL: _url, NODE_OPTIONS: _options, ...rest } = env
  return rest
}

export interface ServerProcess {
  readonly base: string
  readonly child: ChildProcess
  /** Every line the process wrote to stdout and stderr so far. */
  readonly output: Array<string>
  /** The process's resident set size now, in bytes (from /proc). */
  readonly rss: () => number
}

// A free port is only free until someone binds it: another test file's receiver may take it
// between the probe and the server's listen. The server's own "Listening on" line proves the
// port is its own (a /health answer could come from whoever took it); on a port taken in the
// meantime, the server is started again on another one.
const portTaken = /EADDRINUSE/
const attempts = 3

/**
 * A data directory of its own holding the run's migrated database (removed when the scope
 * closes): the server starts on it without PGlite's initdb and the migrations.
 */
const migratedDataDir = Testing.scopedDataDir("waybill-process-")

const spawnServer = (port: number, databaseUrl: string | undefined, options: ServerOptions) =>
  Effect.gen(function* () {
    const output: Array<string> = []
    const dataDir = databaseUrl === undefined ? yield* migratedDataDir : undefined
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(process.execPath, options.from?.args ?? [builtServer], {
          cwd: options.from?.cwd ?? root,
          stdio: ["ignore", "pipe", "pipe"],
          env: {
            ...builtCommandEnv(process.env),
            ...(dataDir === undefined ? { DATABASE_URL: databaseUrl! } : { WAYBILL_DATA_DIR: dataDir }),
            PORT: String(port),
            HOST: "127.0.0.1",
            WAYBILL_SECRET_KEY: "ab".repeat(32),
            WAYBILL_API_KEYS: `ws-proc:${processKey}`,
            WAYBILL_ALLOW_PRIVATE_TARGETS: "true",
            WAYBILL_DELIVERY_TIMEOUT_MS: "3000",
            WAYBILL_RETRY_DELAY_MS: "300",
            ...options.env
          }
        })
        for (const stream of [child.stdout, child.stderr]) {
          let partial = ""
          stream?.setEncoding("utf8")
          stream?.on("data", (chunk: string) => {
            const lines = (partial + chunk).split("\n")
            partial = lines.pop() ?? ""
            output.push(...lines)
          })
        }
        // Without `captureOutput`, its errors are shown as they come (its request log is not).
        if (options.captureOutput !== true) child.stderr?.on("data", (chunk: string) => process.stderr.write(chunk))
        return child
      }),
      // Gone before its data directory is removed.
      (child: ChildProcess) =>
        Effect.async<void>((resume) => {
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          child.once("exit", () => resume(Effect.void))
          child.kill("SIGKILL")
        }).pipe(
          Effect.zipRight(
            Effect.sync(() =>
              assertJsonLogs(output, "the server", options.env?.WAYBILL_LOG_FORMAT ?? runLogFormat.WAYBILL_LOG_FORMAT)
            )
          )
        )
    )
    const listening = `Listening on http://127.0.0.1:${port}`
    const ended = () => child.exitCode !== null || child.signalCode !== null
    yield* eventually(
      Effect.sync(() => ended() || output.some((line) => line.includes(listening))),
      "the server process to start",
      90_000
    )
    return { child, output, listening: !ended() }
  })

interface ServerOptions {
  readonly env?: Record<string, string>
  readonly captureOutput?: boolean
  /** Another checkout's server instead of this one's build: its directory and node's arguments. */
  readonly from?: { readonly cwd: string; readonly args: ReadonlyArray<string> }
}

/**
 * A reference server process on `databaseUrl` (`undefined`: an embedded database, a copy of the
 * run's migrated one), ready when it answers `/health`. `env` adds to or overrides its
 * environment; with `captureOutput` its errors are kept in `output` only, rather than also shown.
 */
export const serverProcess = (databaseUrl: string | undefined, options: ServerOptions = {}) =>
  Effect.gen(function* () {
    for (let attempt = 1; ; attempt++) {
      const port = yield* freePort
      const { child, output, listening } = yield* spawnServer(port, databaseUrl, options)
      if (!listening) {
        if (attempt < attempts && output.some((line) => portTaken.test(line))) continue
        return yield* Effect.die(new Error(`the server process ended before listening:\n${output.join("\n")}`))
      }
      const base = `http://127.0.0.1:${port}`
      yield* eventually(
        Effect.promise(() =>
          fetch(`${base}/health`).then(
            (r) => r.ok,
            () => false
          )
        ),
        "the server process to answer /health",
        30_000
      )
      const rss = () => {
        const status = readFileSync(`/proc/${child.pid}/status`, "utf8")
        const kib = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)
        if (kib === null) throw new Error(`no VmRSS for process ${child.pid}`)
        return Number(kib[1]) * 1024
      }
      return { base, child, output, rss } satisfies ServerProcess
    }
  })

export interface LogEntry {
  /** `DEBUG`, `INFO`, `WARN`, `ERROR` or `FATAL`, in either format. */
  readonly level: string
  readonly message: string
  /** Every field of the record, `level` as written. */
  readonly fields: Readonly<Record<string, unknown>>
}

const logfmtPair = /([A-Za-z0-9_.-]+)=("(?:[^"\\]|\\.)*"|\S*)/g

/**
 * A log record as the server writes it, or `undefined` for another line: a JSON object
 * (`WAYBILL_LOG_FORMAT=json`), or Effect's logfmt (`key=value`, quoted values as JSON strings).
 */
export const logRecord = (line: string): Record<string, unknown> | undefined => {
  if (line.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(line)
      return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : undefined
    } catch {
      return undefined
    }
  }
  if (!line.startsWith("timestamp=")) return undefined
  const fields: Record<string, unknown> = {}
  for (const [, name, value] of line.matchAll(logfmtPair)) {
    fields[name!] = value!.startsWith('"') ? JSON.parse(value!) : value
  }
  return fields
}

/** The log entries among a server's output lines, in either format. */
export const logEntries = (lines: ReadonlyArray<string>): Array<LogEntry> =>
  lines.flatMap((line) => {
    const fields = logRecord(line)
    if (fields === undefined || typeof fields.level !== "string") return []
    return [{ level: fields.level.toUpperCase(), message: String(fields.message), fields }]
  })

/** A JSON `POST` with the processes' API key: the status and the answer's body. */
export const postJson = (base: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${processKey}` },
    body: JSON.stringify(body)
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as { id: string } }))

/** The exit status of `child` once it has ended (at once if it has). */
export const exited = (child: ChildProcess) =>
  Effect.async<number | null>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed(child.exitCode))
    child.once("exit", (code) => resume(Effect.succeed(code)))
  })

/**
 * About 40 `tour-created` events a second, round robin over the processes in `serving` as it is
 * at each send (tours `<prefix><n>`), for ever; the ids of those answered 202 go to `accepted`. A
 * process stopped meanwhile may refuse the connection: that event was not accepted.
 */
export const tourLoad = (serving: ReadonlyArray<ServerProcess>, prefix: string, accepted: Array<string>) => {
  let sent = 0
  return Effect.forever(
    Effect.zipRight(
      Effect.promise(async () => {
        const base = serving[sent % serving.length]!.base
        const reply = await postJson(base, "/events", {
          type: "tour-created",
          payload: { tour: { id: `${prefix}${sent++}`, status: "planned", substatus: null, properties: {} } }
        }).catch(() => undefined)
        if (reply?.status === 202) accepted.push(reply.body.id)
      }),
      Effect.sleep("25 millis")
    )
  )
}

/**
 * Ends a `tourLoad` two seconds on (the processes' last change behind it), then waits until every
 * event it had accepted reached `target` at least once.
 */
export const endLoad = (
  load: Fiber.Fiber<never>,
  accepted: ReadonlyArray<string>,
  target: { readonly for: (eventId: string) => ReadonlyArray<unknown> },
  timeoutMs: number
) =>
  Effect.gen(function* () {
    yield* Effect.sleep("2 seconds")
    yield* Fiber.interrupt(load)
    yield* eventually(
      Effect.sync(() => accepted.every((id) => target.for(id).length >= 1)),
      "every accepted event delivered",
      timeoutMs
    )
  })
